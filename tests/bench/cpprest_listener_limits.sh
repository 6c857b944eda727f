#!/bin/bash
# Why the controller's HTTP port is not cpprestsdk's http_listener (controller/http/http_server.h):
# the abuse probes of tests/support/http_abuse.py against a minimal listener (GET / → 200,
# http_listener_config timeout 2 s, backlog 512), plus the listener's memory after a 32 MiB
# header. Compiles the listener with g++ (libcpprest-dev). Prints one line per probe.
#   tests/bench/cpprest_listener_limits.sh
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
cat >"$tmp/listener.cc" <<'CC'
#define _TURN_OFF_PLATFORM_STRING
#include <cpprest/http_listener.h>
#include <cstdio>
#include <thread>
using namespace web::http;
using namespace web::http::experimental::listener;
int main(int, char** argv) {
  http_listener_config config;
  config.set_timeout(utility::seconds(2));
  config.set_backlog(512);
  http_listener listener(std::string("http://127.0.0.1:") + argv[1] + "/", config);
  listener.support(methods::GET, [](http_request r) { r.reply(status_codes::OK, "ok\n"); });
  listener.open().wait();
  std::printf("listening\n");
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::hours(1));
}
CC
g++ -std=c++17 -O1 "$tmp/listener.cc" -o "$tmp/listener" -lcpprest -lssl -lcrypto -lpthread
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$tmp/listener" "$port" >"$tmp/listener.log" 2>&1 &
pid=$!
until grep -q listening "$tmp/listener.log"; do sleep 0.1; done
python3 - "$port" "$pid" "$src/tests/support" <<'PY'
import sys
port, pid = int(sys.argv[1]), int(sys.argv[2])
sys.path.insert(0, sys.argv[3])
import http_abuse
def rss():
    return next(l.split()[1] for l in open('/proc/%d/status' % pid) if l.startswith('VmRSS')) + ' kB'
bound = 20
probes = http_abuse.standard_probes('/?', ['/%zz', '/?x=%4'], '/nope', '/')
print('cpprest http_listener (timeout 2 s), bound %d s, RSS %s' % (bound, rss()))
for name, payload, drip in probes:
    print('  ' + http_abuse.describe(http_abuse.exchange(port, name, payload, bound, drip)))
idle = http_abuse.hold_idle(port, 50)
closed = [t for t in http_abuse.wait_closed(idle, bound) if t is not None]
print('  50 idle connections: %d closed within %d s' % (len(closed), bound))
big = http_abuse.request('GET', '/', 'X-Big: %s\r\n' % ('b' * (32 << 20)))
print('  ' + http_abuse.describe(http_abuse.exchange(port, '32 MiB header', big, bound)) +
      ', listener RSS then ' + rss())
PY

#!/bin/bash
# Load benchmark of the controller's read-only results API (docs/design.md §8, issue 7): wrk with
# N concurrent connections on loopback for S seconds against a nearest-size lookup, after
# checking that malformed queries answer 400 with a message. Prints wrk's figures.
# Real parts: redis-server, `ccltune tune` (host backend) to fill the cache, the simulator
# (only so the controller has an API server), the controller. Needs `wrk` (Debian).
#   tests/bench/results_api_load.sh BUILD_DIR [SECONDS=30] [CONNECTIONS=100]   (docs/deploy.md, "Under load": 30 200)
set -euo pipefail
build=$(cd "$1" && pwd)
secs=${2:-30}
conns=${3:-100}
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_for() {  # wait_for <seconds> <command...>
  local until=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do [ $SECONDS -lt $until ] || { echo "timed out: $*"; exit 1; }; sleep 0.2; done
}

rport=$(free_port)
redis-server --port "$rport" --bind 127.0.0.1 --save "" --dir "$tmp" --daemonize no \
  --loglevel warning >"$tmp/redis.log" 2>&1 &
pids+=($!)
wait_for 10 redis-cli -p "$rport" ping
url=redis://127.0.0.1:$rport/0
"$build/worker/ccltune" tune --ranks 2 --backend host --redis "$url" --op allReduce,allGather \
  --sizes 1KiB:1MiB:2 --iters 3 --rounds 3 --warmup 1 >"$tmp/tune.log" 2>&1

/usr/bin/python3 "$src/tests/k8s/sim/apiserver.py" --port 0 --port-file "$tmp/sim.port" \
  --kubeconfig-out "$tmp/kubeconfig" >"$tmp/sim.log" 2>&1 &
pids+=($!)
wait_for 20 test -s "$tmp/kubeconfig"
mport=$(free_port) pport=$(free_port)
"$build/controller/ccltune-controller" --kubeconfig "$tmp/kubeconfig" --metrics-port "$mport" \
  --health-probe-bind-address "127.0.0.1:$pport" --redis-url "$url" >"$tmp/controller.log" 2>&1 &
pids+=($!)
base=http://127.0.0.1:$mport
wait_for 20 curl -sf "http://127.0.0.1:$pport/healthz"
fp=$(curl -sf "$base/api/v1/fingerprints" | python3 -c 'import json,sys; d=json.load(sys.stdin); print((d.get("fingerprints") or d)[0] if not isinstance(d, list) else d[0])')
echo "fingerprint $fp"

echo "malformed queries:"
for q in "fingerprint=$fp&op=allReduce&dtype=fp32&bytes=abc" "fingerprint=$fp&op=allreduce&dtype=fp32&bytes=4096" \
         "fingerprint=../x" "op=allReduce" "fingerprint=$fp&bytes=-1&op=allReduce&dtype=fp32" "fingerprint=$fp&%zz=1"; do
  code=$(curl -s -o "$tmp/body" -w '%{http_code}' "$base/api/v1/results?$q")
  printf '  %-60s -> %s %s\n' "$q" "$code" "$(head -c 120 "$tmp/body")"
done

target="$base/api/v1/results?fingerprint=$fp&op=allReduce&dtype=fp32&bytes=3000"
curl -sf "$target" | head -c 200; echo
echo "wrk: $conns connections, $secs s, on $(nproc) cores shared with the controller"
wrk -t2 -c"$conns" -d"${secs}s" --timeout 10s --latency "$target"
echo "controller peak RSS: $(grep VmHWM /proc/"${pids[2]}"/status)"

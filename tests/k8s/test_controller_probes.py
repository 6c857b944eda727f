"""The probes answer while the API port is flooded (issue 35), with the real controller,
simulator and Redis: 500 idle connections and 20 slow clients (one byte a second, connecting
again when closed) held on the API port, while /healthz and /readyz on the probe port
(--health-probe-bind-address) are asked every 0.25 s for as long as the idle connections last.
Every probe must be answered 200 within 1 s, Kubernetes' default probe timeout.

The API port stays bounded as before (controller/http/http_server.h: 32 threads, 2 s request
timeout): a GET /metrics and a GET /api/v1/fingerprints sent behind the flood are answered 200
within the bound of http_abuse.bounds for 520 connections, and every idle connection is closed
within it. Those two requests must also have waited longer than a probe may: otherwise the
load did not hold the API port, and the probes' answers would prove nothing.
"""

import os
import subprocess
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', 'support'))
import http_abuse  # noqa: E402
from test_controller_common import CONTROLLER_BIN, ControllerEnv, test_failed  # noqa: E402

IDLE, SLOW = 500, 20
PROBE_TIMEOUT = 1.0  # s: a kubelet probe's default timeoutSeconds
PROBE_EVERY = 0.25   # s between rounds of /healthz + /readyz
SLOW_HOLD = 5.0      # s a slow client keeps one connection before it connects again
_, API_BOUND = http_abuse.bounds(threads=32, request_timeout_s=2, idle=IDLE + SLOW)
API_PATHS = ('/metrics', '/api/v1/fingerprints')


def get(port, path, bound):
    return http_abuse.exchange(port, path, http_abuse.request('GET', path), bound)


def slow_client(port, stop):
    """One connection after another, each sending a request head one byte a second."""
    head = http_abuse.request('GET', '/api/v1/fingerprints', 'X-Slow: %s\r\n' % ('s' * 64))
    while not stop.is_set():
        http_abuse.exchange(port, 'slow', head, SLOW_HOLD, drip=1.0)


def in_thread(fn, *args):
    t = threading.Thread(target=fn, args=args, daemon=True)
    t.start()
    return t


class ControllerProbesUnderLoadTest(unittest.TestCase):
    def setUp(self):
        self.env = ControllerEnv(nodes=1)
        self.addCleanup(lambda: self.env.close(failed=test_failed(self)))
        self.env.install_crd()
        self.ctl = self.env.start_controller()

    def test_probes_answer_within_1s_while_the_api_port_is_flooded(self):
        port, stop = self.ctl.port, threading.Event()
        idle = http_abuse.hold_idle(port, IDLE)
        slow = [in_thread(slow_client, port, stop) for _ in range(SLOW)]
        api, closed_after = {}, []
        senders = [in_thread(lambda p: api.__setitem__(p, get(port, p, API_BOUND)), p)
                   for p in API_PATHS]
        closer = in_thread(lambda: closed_after.extend(http_abuse.wait_closed(idle, API_BOUND)))
        probes = []
        while closer.is_alive():
            probes += [get(self.ctl.probe_port, p, PROBE_TIMEOUT) for p in ('/healthz', '/readyz')]
            time.sleep(PROBE_EVERY)
        stop.set()
        for t in senders + slow:
            t.join(API_BOUND)

        worst = max(probes, key=lambda o: o.seconds)
        closed = http_abuse.report('API port under load (%d slow clients)' % SLOW,
                                   [api[p] for p in API_PATHS if p in api], closed_after, API_BOUND)
        sys.stderr.write('probe port: %d probes while it lasted, the slowest %s\n' %
                         (len(probes), http_abuse.describe(worst)))
        self.assertEqual(closed, IDLE, 'idle connections still open after %d s' % API_BOUND)
        self.assertGreaterEqual(len(probes), 20, 'the flood lasted too short a time to tell')
        for o in probes:
            self.assertTrue(o.code == 200 and o.closed and o.seconds <= PROBE_TIMEOUT,
                            'probe not answered 200 within %.1f s: %s' %
                            (PROBE_TIMEOUT, http_abuse.describe(o)))
        for p in API_PATHS:
            self.assertIn(p, api, '%s: no answer within %d s' % (p, API_BOUND))
            self.assertEqual(api[p].code, 200, http_abuse.describe(api[p]))
            self.assertLessEqual(api[p].seconds, API_BOUND, http_abuse.describe(api[p]))
        self.assertGreater(min(api[p].seconds for p in API_PATHS), PROBE_TIMEOUT,
                           'the API port answered at once: the load did not hold it')
        self.assertIsNone(self.ctl.proc.poll(), 'controller exited')


class ProbeAddressFlagTest(unittest.TestCase):
    """A bad --health-probe-bind-address stops the controller before it reads any config:
    exit 2 and one line naming the flag and the accepted form."""

    def run_controller(self, *args):
        return subprocess.run([CONTROLLER_BIN, '--kubeconfig', '/nonexistent'] + list(args),
                              capture_output=True, text=True, timeout=30)

    def test_a_malformed_address_is_refused_naming_the_flag(self):
        for bad in ('8081', ':http', ':70000', 'localhost:8081'):
            r = self.run_controller('--health-probe-bind-address', bad)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("--health-probe-bind-address: '%s'" % bad, r.stderr)
            self.assertIn('[HOST]:PORT', r.stderr)

    def test_the_api_port_is_refused_as_the_probe_port(self):
        r = self.run_controller('--metrics-port', '9090', '--health-probe-bind-address', ':9090')
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn('--health-probe-bind-address: port 9090', r.stderr)


if __name__ == '__main__':
    unittest.main()

"""Bad HTTP against a worker's metrics port (issue 24), while that worker tunes: a real
`ccltune tune` (2 host-backend ranks, its own redis-server) serves /metrics on rank 0's port
through prometheus-cpp's Exposer. An 8 KiB URL, a 64 KiB header, malformed percent-escapes in
the path, an unknown path, POST and DELETE, a client that sends one byte a second, then 500
idle connections: each gets a 4xx or a closed connection within its bound; the job still
publishes and exits 0; the exposer answers afterwards.

A malformed escape in the *query* of /metrics is answered 200 with the exposition: the
Exposer never decodes a query, so there is no parser to hurt (checked and printed here).

Bounds follow from worker/metrics/metrics_exposer.h (civetweb: 32 threads, 2 s request
timeout, 8 KiB head), as in tests/k8s/test_controller_http_abuse.py.
"""

import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'support'))
import http_abuse  # noqa: E402

CCLTUNE = os.environ.get('CCLTUNE_BIN', '')
IDLE = 500
PROBE_BOUND, IDLE_BOUND = http_abuse.bounds(threads=32, request_timeout_s=2, idle=IDLE)


def free_port_pair():
    """P with P and P+1 bindable a moment ago, below the ephemeral range (the ranks bind them
    after opening many connections of their own)."""
    for _ in range(100):
        base = random.randint(20000, 32000)
        try:
            for p in (base, base + 1):
                with socket.socket() as s:
                    s.bind(('0.0.0.0', p))
            return base
        except OSError:
            continue
    raise RuntimeError('no free port pair')


def scrape(port):
    try:
        with urllib.request.urlopen('http://127.0.0.1:%d/metrics' % port, timeout=5) as r:
            return r.status, r.read().decode()
    except OSError as e:
        return 0, str(e)


class WorkerMetricsHttpAbuseTest(unittest.TestCase):
    def setUp(self):
        self.assertTrue(CCLTUNE and os.access(CCLTUNE, os.X_OK), 'CCLTUNE_BIN: %r' % CCLTUNE)
        self.dir = tempfile.TemporaryDirectory(prefix='ccltune-abuse-')
        self.port = free_port_pair()
        self.log = open(os.path.join(self.dir.name, 'tune.log'), 'w+')
        self.tune = subprocess.Popen(
            [CCLTUNE, 'tune', '--ranks', '2', '--backend', 'host', '--cache-dir', self.dir.name,
             '--op', 'allReduce,allGather', '--sizes', '1KiB:8MiB:2', '--iters', '20',
             '--rounds', '5', '--warmup', '1', '--metrics-port-base', str(self.port),
             '--metrics-linger', str(IDLE_BOUND + 15)],
            stdout=self.log, stderr=subprocess.STDOUT)
        self.addCleanup(self.stop)

    def stop(self):
        if self.tune.poll() is None:
            self.tune.kill()
            self.tune.wait()
        self.log.close()
        self.dir.cleanup()

    def tune_log(self):
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()

    def test_bad_requests_get_4xx_or_close_within_bounds_while_the_job_runs(self):
        end = time.monotonic() + 60
        while scrape(self.port)[0] != 200:
            self.assertLess(time.monotonic(), end, 'no /metrics: ' + self.tune_log()[-2000:])
            time.sleep(0.2)
        probes = http_abuse.standard_probes(
            long_url_prefix='/metrics?', bad_escape_targets=['/metrics%zz', '/%', '/%4'],
            unknown_path='/nope', known_path='/metrics')
        outcomes = http_abuse.run(self.port, probes, PROBE_BOUND)
        query = http_abuse.exchange(self.port, 'escape in query',
                                    http_abuse.request('GET', '/metrics?x=%zz'), PROBE_BOUND)
        closed_after = http_abuse.wait_closed(http_abuse.hold_idle(self.port, IDLE), IDLE_BOUND)
        closed = http_abuse.report('worker metrics port abuse', outcomes + [query], closed_after,
                                   IDLE_BOUND)
        sys.stderr.write('  tuning finished before the idle connections were closed: %s\n' %
                         ('# pre-sync wait' in self.tune_log()))
        for o in outcomes:
            self.assertTrue(http_abuse.acceptable(o, PROBE_BOUND), http_abuse.describe(o))
        self.assertEqual(query.code, 200, http_abuse.describe(query))
        self.assertEqual(closed, IDLE, 'idle connections still open after %d s' % IDLE_BOUND)
        code, body = scrape(self.port)
        self.assertEqual(code, 200, body)
        self.assertIn('ccltune_tuning_duration_seconds{', body)
        self.assertEqual(self.tune.wait(timeout=IDLE_BOUND + 120), 0, self.tune_log()[-3000:])
        self.assertRegex(self.tune_log(), r'(\d+) problems, \1 published')
        sys.stderr.write('  the job: ' + re.search(r'\d+ problems, \d+ published',
                                                   self.tune_log()).group(0) + ', exit 0\n')


if __name__ == '__main__':
    unittest.main()

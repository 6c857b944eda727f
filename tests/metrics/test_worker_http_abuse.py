"""Bad HTTP against a worker's metrics port (issue 24), while that worker tunes: a real
`ccltune tune` (2 host-backend ranks, its own redis-server) serves /metrics on rank 0's port
through prometheus-cpp's Exposer. An 8 KiB URL, a 64 KiB header, malformed percent-escapes in
the path, an unknown path, POST and DELETE, a client that sends one byte a second, then 500
idle connections: each probe gets the exact answer the table in docs/metrics.md promises within its
bound, every idle connection is closed within its bound; the job still publishes and exits 0;
the exposer answers afterwards.

The job is kept in its tuning phase for the whole abuse (issue 37): its one problem ends with
`test-hang` (a test-only choice: rank 1 stops communicating until the choice's deadline,
HANG_S), after the default and `direct` were measured. The test waits until /metrics shows the
default's time (tuning under way), and after every check it reads /metrics again: no winner
yet and no test-hang timeout, so the problem, and the job's tuning, had not finished while the
connections were held and the checks were made (a winner, once set, stays).

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
# The abuse takes about 2 + 32 s (the slow probe, the idle waves); the hang outlasts its bounds.
HANG_S = 65
ESCAPES = {'/metrics%zz': 404, '/%': 404, '/%4': 404}
# docs/metrics.md's worker column: civetweb answers POST to a GET-only handler 404, DELETE 405.
CODES = http_abuse.standard_codes(ESCAPES, post_code=404)


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


def samples(body, name, labels=''):
    """The lines of metric `name` whose label text contains `labels`."""
    return [l for l in body.splitlines()
            if re.match(r'^%s\{[^}]*%s' % (re.escape(name), re.escape(labels)), l)]


class WorkerMetricsHttpAbuseTest(unittest.TestCase):
    def setUp(self):
        self.assertTrue(CCLTUNE and os.access(CCLTUNE, os.X_OK), 'CCLTUNE_BIN: %r' % CCLTUNE)
        self.dir = tempfile.TemporaryDirectory(prefix='ccltune-abuse-')
        self.port = free_port_pair()
        self.log = open(os.path.join(self.dir.name, 'tune.log'), 'w+')
        self.tune = subprocess.Popen(
            [CCLTUNE, 'tune', '--ranks', '2', '--backend', 'host', '--cache-dir', self.dir.name,
             '--op', 'allReduce', '--sizes', '64KiB', '--iters', '20', '--rounds', '5',
             '--warmup', '1', '--choices', 'ring,direct,test-hang', '--choice-timeout',
             str(HANG_S), '--metrics-port-base', str(self.port), '--metrics-linger', '5'],
            stdout=self.log, stderr=subprocess.STDOUT,
            env=dict(os.environ, CCLTUNE_ENABLE_TEST_CHOICES='1', CCLTUNE_TEST_HANG_RANK='1'))
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

    def wait_tuning(self):
        """Until rank 0's /metrics has the default's time: the problem's measurements began."""
        end = time.monotonic() + 60
        while True:
            code, body = scrape(self.port)
            if code == 200 and samples(body, 'ccltune_choice_time_seconds', 'choice="ring"'):
                return time.monotonic()
            self.assertLess(time.monotonic(), end, 'no default time on /metrics: ' +
                            (body if code == 200 else self.tune_log())[-2000:])
            time.sleep(0.2)

    def test_bad_requests_get_their_promised_answers_within_bounds_while_the_job_tunes(self):
        tuning_since = self.wait_tuning()
        probes = http_abuse.standard_probes(
            long_url_prefix='/metrics?', bad_escape_targets=list(ESCAPES),
            unknown_path='/nope', known_path='/metrics')
        outcomes = http_abuse.run(self.port, probes, PROBE_BOUND)
        query = http_abuse.exchange(self.port, 'escape in query',
                                    http_abuse.request('GET', '/metrics?x=%zz'), PROBE_BOUND)
        closed_after = http_abuse.wait_closed(http_abuse.hold_idle(self.port, IDLE), IDLE_BOUND)
        closed = http_abuse.report('worker metrics port abuse', outcomes + [query], closed_after,
                                   IDLE_BOUND)
        code, body = scrape(self.port)
        checked = time.monotonic() - tuning_since
        # Still in the problem: no winner, test-hang not yet timed out (both appear at its end).
        still_tuning = (code == 200 and not samples(body, 'ccltune_winner_info') and
                        not samples(body, 'ccltune_choice_failures_total', 'choice="test-hang"'))
        sys.stderr.write('  still tuning when every check was made, %.1f s after tuning was '
                         'seen: %s\n' % (checked, still_tuning))
        self.assertEqual(http_abuse.unexpected(outcomes, CODES, PROBE_BOUND), [])
        self.assertEqual(query.code, 200, http_abuse.describe(query))
        self.assertEqual(closed, IDLE, 'idle connections still open after %d s' % IDLE_BOUND)
        self.assertEqual(code, 200, body)
        self.assertTrue(samples(body, 'ccltune_choice_time_seconds', 'choice="ring"'), body)
        self.assertTrue(still_tuning, 'the job finished its problem before the checks did:\n' +
                        '\n'.join(samples(body, 'ccltune_winner_info') +
                                  samples(body, 'ccltune_choice_failures_total')))
        self.assertEqual(self.tune.wait(timeout=HANG_S + 120), 0, self.tune_log()[-3000:])
        log = self.tune_log()
        self.assertRegex(log, r'1 problem, 1 published')
        self.assertRegex(log, r'\[rank 1\] test-hang: Timeout: choice timeout: still running '
                              r'after [0-9.]+ s, past choiceTimeoutSeconds [0-9.]+ s: rank 1: '
                              r'test-hang blocked')
        sys.stderr.write('  the job: ' + re.search(r'\d+ problems?, \d+ published', log).group(0) +
                         ', test-hang timed out, exit 0\n')


if __name__ == '__main__':
    unittest.main()

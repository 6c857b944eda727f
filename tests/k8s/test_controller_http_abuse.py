"""Bad HTTP against the controller's port (issue 24), with the real controller, simulator,
node agent and worker pods: an 8 KiB URL, a 64 KiB header, malformed percent-escapes, an
unknown path, POST and DELETE, a client that sends one byte a second, then 500 idle
connections held open. Each probe gets the exact answer the table in docs/metrics.md promises within
its bound, every idle connection is closed within its bound; a job created when the abuse
starts still succeeds; the controller is alive and answers afterwards.

Bounds follow from controller/http/http_server.h (civetweb: 32 threads, 2 s request timeout): one
probe at a time is closed after 2 s, so PROBE_BOUND allows 8 s of a loaded 2-core machine;
500 idle connections are closed 32 at a time, every 2 s, so about 32 s for the last one.
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', 'support'))
import http_abuse  # noqa: E402
from test_controller_common import ControllerEnv, FINAL, test_failed, tiny_spec  # noqa: E402

IDLE = 500
PROBE_BOUND, IDLE_BOUND = http_abuse.bounds(threads=32, request_timeout_s=2, idle=IDLE)
ESCAPES = {'/api/v1/results?fingerprint=%zz': 400, '/api/v1/results?op=%4': 400,
           '/healthz?x=%': 400, '/%zz': 404}
# docs/metrics.md's controller column: the server answers 405 to any method but GET and HEAD.
CODES = http_abuse.standard_codes(ESCAPES, post_code=405)


class ControllerHttpAbuseTest(unittest.TestCase):
    def setUp(self):
        self.env = ControllerEnv(nodes=1)
        self.addCleanup(lambda: self.env.close(failed=test_failed(self)))
        self.env.install_crd()
        self.ctl = self.env.start_controller()

    def test_bad_requests_get_their_promised_answers_within_bounds_while_a_job_completes(self):
        self.env.create_job('during-abuse', tiny_spec())
        probes = http_abuse.standard_probes(
            long_url_prefix='/api/v1/results?fingerprint=',
            bad_escape_targets=list(ESCAPES),
            unknown_path='/nope', known_path='/api/v1/results')
        outcomes = http_abuse.run(self.ctl.port, probes, PROBE_BOUND)
        closed_after = http_abuse.wait_closed(http_abuse.hold_idle(self.ctl.port, IDLE), IDLE_BOUND)
        closed = http_abuse.report('controller abuse', outcomes, closed_after, IDLE_BOUND)
        self.assertEqual(http_abuse.unexpected(outcomes, CODES, PROBE_BOUND), [])
        self.assertEqual(closed, IDLE, 'idle connections still open after %d s' % IDLE_BOUND)
        st = self.env.wait_phase('during-abuse', FINAL, timeout=120)
        self.assertEqual(st['phase'], 'Succeeded', st)
        self.assertIsNone(self.ctl.proc.poll(), 'controller exited')
        self.assertEqual(self.ctl.probe('/healthz')[0], 200)
        self.assertEqual(self.ctl.get('/api/v1/fingerprints')[0], 200)


if __name__ == '__main__':
    unittest.main()

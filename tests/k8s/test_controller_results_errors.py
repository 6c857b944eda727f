"""The results API's error answers on the real controller, with a real Redis (issue 37): a
handler that throws is answered 500 with the API's JSON error body and counted in
ccltune_results_requests_total{code="500"}; a query whose fingerprint is not UTF-8 is a 400
naming the parameter, not a 500.

The exception comes through a real input path: a member of the fingerprint set
(ccltune:v1:fingerprints) that is not UTF-8. ccltune never writes one (its fingerprints are
[0-9a-z-_]), but the cache is shared: nlohmann::json refuses to write the member as JSON and
throws inside the handler.
"""

import json
import os
import sys
import unittest
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_controller_common import ControllerEnv, test_failed  # noqa: E402

FINGERPRINTS = 'ccltune:v1:fingerprints'
REQUESTS = 'ccltune_results_requests_total'


class ResultsApiErrorsTest(unittest.TestCase):
    def setUp(self):
        self.env = ControllerEnv(nodes=1)
        self.addCleanup(lambda: self.env.close(failed=test_failed(self)))
        self.env.install_crd()
        self.ctl = self.env.start_controller()

    def get(self, path):
        """(code, content type, body) of a GET on the controller's port."""
        url = 'http://127.0.0.1:%d%s' % (self.ctl.port, path)
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                return r.status, r.headers.get('Content-Type'), r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers.get('Content-Type'), e.read().decode()

    def test_a_handler_exception_is_500_with_a_json_error_and_counted(self):
        self.assertEqual(self.env.redis.cli('SADD', FINGERPRINTS, 'fp-good'), '1')
        self.assertEqual(self.get('/api/v1/fingerprints')[0], 200)
        self.assertEqual(self.ctl.metric(REQUESTS, 'code="500"'), 0)
        self.assertEqual(self.env.redis.cli('SADD', FINGERPRINTS, b'fp-\xff'), '1')

        code, ctype, body = self.get('/api/v1/fingerprints')
        self.assertEqual(code, 500, body)
        self.assertEqual(ctype, 'application/json')
        error = json.loads(body)['error']
        self.assertRegex(error, r'^internal error: \[json\.exception\.type_error\.316\] '
                                r'invalid UTF-8 byte')
        self.assertEqual(self.ctl.metric(REQUESTS, 'code="500"'), 1)
        self.assertEqual(self.ctl.metric(REQUESTS, 'code="200"'), 1)
        # The controller goes on: the member removed, the same request is answered.
        self.assertEqual(self.env.redis.cli('SREM', FINGERPRINTS, b'fp-\xff'), '1')
        code, _, body = self.get('/api/v1/fingerprints')
        self.assertEqual((code, json.loads(body)), (200, {'fingerprints': ['fp-good']}))
        self.assertIsNone(self.ctl.proc.poll(), 'controller exited')

    def test_a_fingerprint_that_is_not_utf8_is_400_naming_it(self):
        code, ctype, body = self.get('/api/v1/results?fingerprint=%FF')
        self.assertEqual(code, 400, body)
        self.assertEqual(ctype, 'application/json')
        self.assertEqual(json.loads(body)['error'],
                         "fingerprint '\ufffd' is not allowed (must be 1-64 characters of 0-9, "
                         "a-z, '-', '_')")
        self.assertEqual(self.ctl.metric(REQUESTS, 'code="400"'), 1)
        self.assertEqual(self.ctl.metric(REQUESTS, 'code="500"'), 0)


if __name__ == '__main__':
    unittest.main()

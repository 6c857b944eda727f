"""A failed pod's own words reach the job (issue 44): the worker container runs with
terminationMessagePolicy FallbackToLogsOnError, the node agent fills
state.terminated.message as the kubelet does, and the controller puts the rank's line, cleaned
(control characters out, URL passwords masked), into the job's Failed condition. The pods run a
stand-in worker (--ccltune-command) so each case says exactly what it wrote."""

import os
import stat
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_controller_common import ControllerEnv, test_failed, tiny_spec  # noqa: E402

# Writes its fatal line to the termination log, as `ccltune worker` does, after some log noise.
BY_FILE = '''#!/bin/sh
echo "rank 0: starting"
printf 'error: lost the Redis cache at redis://ccl:hunter2@127.0.0.1:6390/0 while publishing\\033[0m\\n' \\
  > "$CCLTUNE_TERMINATION_LOG"
echo "rank 0: a later log line"
exit 1
'''
# Dies without writing one: the kubelet falls back to the log's tail.
BY_LOG = '''#!/bin/sh
echo "rank 0: starting"
echo "ccltune worker: rank 0: error: the cause, from the log" >&2
echo "rank 0: metrics pushed"
exit 3
'''


class TerminationMessageTest(unittest.TestCase):
    def run_job(self, script, name):
        env = ControllerEnv(nodes=1)
        self.addCleanup(lambda: env.close(failed=test_failed(self)))
        path = os.path.join(env.dir, 'fake-worker')
        with open(path, 'w') as f:
            f.write(script)
        os.chmod(path, stat.S_IRWXU)
        env.install_crd()
        env.start_controller('c0', ['--ccltune-command', path])
        env.create_job(name, tiny_spec())
        st = env.wait_phase(name, ('Succeeded', 'Failed'), timeout=60)
        self.assertEqual(st['phase'], 'Failed', st)
        return env.condition(name, 'Failed')['message']

    def test_the_workers_termination_log_line_is_in_the_failed_condition(self):
        msg = self.run_job(BY_FILE, 'by-file')
        self.assertIn('pod by-file-a0-0 failed: exit code 1 (Error): error: lost the Redis cache at '
                      'redis://ccl:***@127.0.0.1:6390/0 while publishing', msg)
        self.assertNotIn('hunter2', msg)
        self.assertNotIn('\x1b', msg)
        self.assertNotIn('later log line', msg, 'the file, not the log, when the worker wrote one')

    def test_without_a_termination_log_the_last_error_line_of_the_log_is_used(self):
        msg = self.run_job(BY_LOG, 'by-log')
        self.assertTrue(msg.endswith('pod by-log-a0-0 failed: exit code 3 (Error): '
                                     'ccltune worker: rank 0: error: the cause, from the log'), msg)


if __name__ == '__main__':
    unittest.main()

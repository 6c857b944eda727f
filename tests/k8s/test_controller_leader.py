"""Two controller replicas with --leader-elect: exactly one holds the Lease and reconciles;
the standby is ready (synced caches) but idle; when the leader dies without releasing the
Lease, the standby takes over after the lease duration and reconciles new jobs; a leader
frozen past its lease (SIGSTOP) and resumed writes nothing before it has checked its Lease
(issue 44), as the simulator's audit log shows."""

import os
import signal
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_controller_common import FINAL, ControllerEnv, test_failed, tiny_spec, wait_until  # noqa: E402

LEASE = '/apis/coordination.k8s.io/v1/namespaces/default/leases/ccltune-controller'


class LeaderElectionTest(unittest.TestCase):
    def setUp(self):
        self.env = ControllerEnv(nodes=1)
        self.addCleanup(lambda: self.env.close(failed=test_failed(self)))
        self.env.install_crd()

    def holder(self):
        code, lease = self.env.api('GET', LEASE)
        return lease.get('spec', {}).get('holderIdentity') if code == 200 else None

    def test_two_replicas_exactly_one_reconciles_and_the_standby_takes_over(self):
        env = self.env
        a = env.start_controller('replica-a', ['--leader-elect'])
        b = env.start_controller('replica-b', ['--leader-elect'])
        leader_name = wait_until(self.holder, 20, 'a lease holder')
        leader, standby = (a, b) if leader_name == 'replica-a' else (b, a)
        wait_until(lambda: leader.probe('/readyz')[1].strip() == 'ready: leader', 20, 'leader readyz')
        self.assertEqual(standby.probe('/readyz'), (200, 'ready: standby\n'))
        for i in range(3):
            env.create_job('le-%d' % i, tiny_spec())
        for i in range(3):
            self.assertEqual(env.wait_phase('le-%d' % i, ('Succeeded', 'Failed'), 60)['phase'], 'Succeeded')
        self.assertGreater(leader.metric('ccltune_reconcile_total'), 0)
        self.assertEqual(standby.metric('ccltune_reconcile_total'), 0, 'the standby must not reconcile')
        self.assertEqual(standby.metric('ccltune_controller_leader'), 0)
        # The leader dies without releasing: the standby waits out the lease (15 s), then leads.
        leader.kill(signal.SIGKILL)
        wait_until(lambda: self.holder() == standby.name, 40, 'standby to acquire the lease')
        wait_until(lambda: standby.probe('/readyz')[1].strip() == 'ready: leader', 10, 'standby readyz leader')
        env.create_job('after-failover', tiny_spec())
        st = env.wait_phase('after-failover', ('Succeeded', 'Failed'), 60)
        self.assertEqual(st['phase'], 'Succeeded')
        self.assertGreater(standby.metric('ccltune_reconcile_total'), 0)

    def test_a_leader_that_cannot_renew_steps_down_and_stops_reconciling(self):
        env = self.env
        c = env.start_controller('solo', ['--leader-elect'])
        wait_until(lambda: c.probe('/readyz')[1].strip() == 'ready: leader', 20, 'leader')
        # Every lease request fails for a while: past the 10 s renew deadline it must step down.
        env.api('POST', '/_sim/faults', {'verb': '*', 'resource': 'leases', 'code': 503, 'count': 1000})
        wait_until(lambda: c.probe('/readyz')[1].strip() == 'ready: standby', 20, 'step down')
        before = c.metric('ccltune_reconcile_total')
        env.create_job('while-standby', tiny_spec())
        time.sleep(3)
        self.assertEqual(c.metric('ccltune_reconcile_total'), before, 'a standby must not reconcile')
        self.assertEqual(env.status('while-standby'), {})
        env.api('DELETE', '/_sim/faults')
        wait_until(lambda: c.probe('/readyz')[1].strip() == 'ready: leader', 30, 'leadership regained')
        self.assertEqual(env.wait_phase('while-standby', ('Succeeded', 'Failed'), 60)['phase'], 'Succeeded')

    def test_a_resumed_former_leader_sends_no_write_before_checking_its_lease(self):
        env = self.env
        # Short lease so the test takes seconds: lease 4 s, renew deadline 3 s, retry 0.5 s.
        fast = ['--leader-elect', '--leader-elect-lease-duration', '4', '--leader-elect-renew-deadline', '3',
                '--leader-elect-retry-period', '0.5']
        a = env.start_controller('replica-a', fast)
        wait_until(lambda: self.holder() == 'replica-a', 20, 'replica-a to lead')
        b = env.start_controller('replica-b', fast)
        env.create_job('before', tiny_spec())
        self.assertEqual(env.wait_phase('before', FINAL, 60)['phase'], 'Succeeded')
        a.proc.send_signal(signal.SIGSTOP)
        self.addCleanup(lambda: a.proc.poll() is None and a.proc.send_signal(signal.SIGCONT))
        # Work that lands in the frozen replica's watch streams and queue while it sleeps.
        env.create_job('during', tiny_spec())
        wait_until(lambda: self.holder() == 'replica-b', 20, 'replica-b to take the lease over')
        self.assertEqual(env.wait_phase('during', FINAL, 60)['phase'], 'Succeeded')
        mark = env.api('GET', '/_sim/audit?since=0')[1]['next']
        env.create_job('at-resume', tiny_spec())  # both replicas race for it as A wakes up
        a.proc.send_signal(signal.SIGCONT)
        wait_until(lambda: a.probe('/readyz')[1].strip() == 'ready: standby', 10, 'A to step down')
        self.assertEqual(env.wait_phase('at-resume', FINAL, 60)['phase'], 'Succeeded')
        time.sleep(1)
        events = env.api('GET', '/_sim/audit?since=%d' % mark)[1]['items']
        by_a = [e for e in events if '(replica-a)' in e.get('userAgent', '')]
        writes = ['%s %s' % (e['verb'], e['requestURI']) for e in by_a
                  if e['verb'] in MUTATING and e.get('objectRef', {}).get('resource') != 'leases']
        self.assertEqual(writes, [], 'the resumed former leader wrote')
        self.assertTrue(any(e.get('objectRef', {}).get('resource') == 'leases' for e in by_a),
                        'A read its Lease after resuming')
        self.assertTrue(any('(replica-b)' in e.get('userAgent', '') and e['verb'] in MUTATING for e in events),
                        'the new leader did the work')
        self.assertEqual(self.holder(), 'replica-b')
        self.assertEqual(b.probe('/readyz')[1].strip(), 'ready: leader')


MUTATING = ('create', 'update', 'patch', 'delete', 'deletecollection')


if __name__ == '__main__':
    unittest.main()

"""Fault handling of the controller with real worker processes: a killed worker pod, an
exhausted backoffLimit, a pod that never schedules, a controller killed mid-job, a watch
whose history expired (410) while a job was created, and the job's Redis killed mid-tune."""

import os
import signal
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_controller_common import ControllerEnv, Redis, free_port, test_failed, tiny_spec, wait_until  # noqa: E402

# Long enough (several seconds of host-backend benchmarking) that a pod can be killed mid-run.
SLOW_COLLECTIVES = [{'op': 'allReduce', 'dtypes': ['fp32'], 'reduceOp': 'sum',
                     'sizes': {'min': '1KiB', 'max': '4MiB', 'factor': 2}}]
SLOW_BENCH = {'warmupIters': 2, 'iters': 20, 'rounds': 5, 'preSyncWindowSeconds': 10,
              'rendezvousTimeoutSeconds': 60, 'choiceTimeoutSeconds': 20}


# Issue 44: from the moment the job's redis-server dies to the job's Failed status. A rank ends
# within its one bound for the whole job (not one per problem): 10 s unreachable, plus at most
# one main-thread call's own 10 s reconnect and 5 s of timeouts (integration_cancel checks it);
# then the pod exits and the controller fails the job on the pod's status (no Redis needed).
LOST_REDIS_BOUND_S = 45


def slow_spec(**over):
    return tiny_spec(world=2, per_pod=1, collectives=SLOW_COLLECTIVES, benchmark=SLOW_BENCH, **over)


class PodWatcher(threading.Thread):
    """Records every (name, uid) of the job's pods it ever sees, polling every 50 ms."""

    def __init__(self, env, job):
        super().__init__(daemon=True)
        self.env, self.job, self.seen, self.stop = env, job, set(), threading.Event()

    def run(self):
        while not self.stop.is_set():
            for p in self.env.pods(self.job):
                self.seen.add((p['metadata']['name'], p['metadata']['uid']))
            time.sleep(0.05)


class FaultTest(unittest.TestCase):
    def setUp(self):
        self.env = ControllerEnv(nodes=2)
        self.addCleanup(lambda: self.env.close(failed=test_failed(self)))
        self.env.install_crd()
        self.ctl = self.env.start_controller()

    def running_pid(self, pod):
        return wait_until(lambda: self.env.sim.pid_of(pod), 60, 'process of pod %s' % pod, interval=0.05)

    def test_killed_worker_pod_starts_a_new_attempt_that_succeeds(self):
        env = self.env
        env.create_job('kill', slow_spec(backoffLimit=2))
        pid = self.running_pid('kill-a0-1')
        time.sleep(0.5)
        os.killpg(pid, signal.SIGKILL)
        st = env.wait_phase('kill', ('Succeeded', 'Failed'), timeout=100)
        self.assertEqual(st['phase'], 'Succeeded', st)
        self.assertEqual(st['attempt'], 1, st)
        self.assertEqual(st['failures'], 1, st)
        names = sorted(p['metadata']['name'] for p in env.pods('kill'))
        self.assertEqual(names, ['kill-a1-0', 'kill-a1-1'])
        self.assertTrue(st['results']['winners'])

    def test_exhausted_backoff_limit_fails_with_reason_and_pod_message(self):
        env = self.env
        dead = 'redis://127.0.0.1:%d/0' % free_port()  # nothing listens: every worker fails
        spec = tiny_spec(backoffLimit=1, cache={'redisURL': dead})
        spec['benchmark']['rendezvousTimeoutSeconds'] = 5
        env.create_job('doomed', spec)
        st = env.wait_phase('doomed', ('Succeeded', 'Failed'), timeout=100)
        self.assertEqual(st['phase'], 'Failed', st)
        failed = env.condition('doomed', 'Failed')
        self.assertEqual(failed['status'], 'True')
        self.assertEqual(failed['reason'], 'BackoffLimitExceeded')
        self.assertIn('doomed-a1-0 failed', failed['message'])
        self.assertIn('exit code', failed['message'])
        self.assertEqual(st['failures'], 2)
        self.assertEqual(st['attempt'], 1)
        wait_until(lambda: not env.pods('doomed'), 20, 'failed attempt pods deleted')

    def test_pod_that_never_schedules_fails_at_active_deadline(self):
        env = self.env
        spec = tiny_spec(activeDeadlineSeconds=4,
                         template={'nodeSelector': {'ccltune.io/no-such-node': 'true'}})
        env.create_job('stuck', spec)
        wait_until(lambda: (env.condition('stuck', 'PodsScheduled') or {}).get('reason') == 'Unschedulable',
                   20, 'PodsScheduled=False Unschedulable')
        st = env.wait_phase('stuck', ('Succeeded', 'Failed'), timeout=30)
        failed = env.condition('stuck', 'Failed')
        self.assertEqual((st['phase'], failed['reason']), ('Failed', 'DeadlineExceeded'), st)
        start = time.strptime(st['startTime'], '%Y-%m-%dT%H:%M:%SZ')
        end = time.strptime(st['completionTime'], '%Y-%m-%dT%H:%M:%SZ')
        elapsed = time.mktime(end) - time.mktime(start)
        self.assertGreaterEqual(elapsed, 4)
        self.assertLess(elapsed, 8, 'the deadline is requeued for, not found by a late resync')
        wait_until(lambda: not env.pods('stuck'), 20, 'pods deleted at the deadline')

    def test_controller_killed_mid_job_adopts_pods_without_duplicates(self):
        env = self.env
        watcher = PodWatcher(env, 'adopt')
        watcher.start()
        env.create_job('adopt', slow_spec())
        self.running_pid('adopt-a0-0')
        self.running_pid('adopt-a0-1')
        self.ctl.kill(signal.SIGKILL)
        time.sleep(1)
        self.assertTrue(env.sim.pid_of('adopt-a0-0') and env.sim.pid_of('adopt-a0-1'),
                        'the attempt must still be running while no controller is up')
        self.assertNotIn(env.phase('adopt'), ('Succeeded', 'Failed'))
        env.start_controller('c1')
        st = env.wait_phase('adopt', ('Succeeded', 'Failed'), timeout=100)
        watcher.stop.set()
        watcher.join()
        self.assertEqual(st['phase'], 'Succeeded', st)
        self.assertEqual(st['attempt'], 0)
        self.assertEqual(sorted(n for n, _ in watcher.seen), ['adopt-a0-0', 'adopt-a0-1'],
                         'one pod per index, never re-created: %s' % watcher.seen)

    def test_lost_redis_fails_the_job_within_the_bound_naming_redis_and_its_address(self):
        env = self.env
        cache = Redis(env.dir)  # the job's own cache; the controller's default one stays up
        self.addCleanup(lambda: cache.proc.poll() is None and cache.stop())
        spec = slow_spec(cache={'redisURL': cache.url})
        spec['benchmark'] = dict(SLOW_BENCH, rounds=20)  # tens of seconds: killed long before
        env.create_job('lost', spec)
        wait_until(lambda: (env.condition('lost', 'Benchmarking') or {}).get('status') == 'True', 60,
                   'Benchmarking=True')
        cache.proc.kill()
        cache.proc.wait(timeout=10)
        killed = time.monotonic()
        st = env.wait_phase('lost', ('Succeeded', 'Failed'), timeout=LOST_REDIS_BOUND_S + 30)
        elapsed = time.monotonic() - killed
        self.assertEqual(st['phase'], 'Failed', st)
        msg = env.condition('lost', 'Failed')['message']
        self.assertIn('lost the Redis cache at redis://127.0.0.1:%d' % cache.port, msg)
        self.assertLess(elapsed, LOST_REDIS_BOUND_S, 'Failed %.1f s after Redis died: %s' % (elapsed, msg))
        sys.stderr.write('[lost redis] Failed %.1f s after the kill: %s\n' % (elapsed, msg))

    def test_watch_410_relists_and_sees_a_job_created_meanwhile(self):
        env = self.env
        # Hold the controller's next job watch for 3 s; end the current one; create a job and
        # drop the history meanwhile, so the re-watch from the old resourceVersion gets 410.
        env.api('POST', '/_sim/faults', {'verb': 'watch', 'resource': 'collectivetuningjobs', 'code': 0,
                                         'delaySeconds': 3, 'count': 1})
        env.api('POST', '/_sim/close-watches')
        time.sleep(0.5)
        env.create_job('during-gap', tiny_spec())
        env.api('POST', '/_sim/compact')
        st = env.wait_phase('during-gap', ('Succeeded', 'Failed'), timeout=60)
        self.assertEqual(st['phase'], 'Succeeded', st)
        self.assertIn('watch expired (410), relisting', self.ctl.logs())

    def test_status_write_conflicts_are_retried_on_a_fresh_copy(self):
        env = self.env
        env.api('POST', '/_sim/faults', {'verb': 'update', 'resource': 'collectivetuningjobs',
                                         'subresource': 'status', 'namespace': 'default', 'name': 'conflicted',
                                         'code': 409, 'count': 3})
        env.create_job('conflicted', tiny_spec())
        st = env.wait_phase('conflicted', ('Succeeded', 'Failed'), timeout=60)
        self.assertEqual(st['phase'], 'Succeeded', st)
        left = [f for f in env.api('GET', '/_sim/faults')[1].get('faults', []) if f.get('name') == 'conflicted']
        self.assertEqual(left, [], 'every injected 409 was consumed (and retried past)')

    def test_suspend_deletes_pods_and_resume_runs_a_fresh_attempt(self):
        env = self.env
        env.create_job('pausable', slow_spec())
        self.running_pid('pausable-a0-0')
        env.kubectl('patch', 'ctj', 'pausable', '--type', 'merge', '-p', '{"spec":{"suspend":true}}')
        env.wait_phase('pausable', 'Suspended', timeout=20)
        wait_until(lambda: not env.pods('pausable'), 30, 'pods deleted on suspend')
        self.assertNotIn('startTime', env.status('pausable'))
        env.kubectl('patch', 'ctj', 'pausable', '--type', 'merge', '-p', '{"spec":{"suspend":false}}')
        st = env.wait_phase('pausable', ('Succeeded', 'Failed'), timeout=100)
        self.assertEqual((st['phase'], st['attempt'], st.get('failures', 0)), ('Succeeded', 1, 0), st)


if __name__ == '__main__':
    unittest.main()

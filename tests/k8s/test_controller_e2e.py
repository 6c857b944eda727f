"""The quickstart path end to end: `kubectl apply -f manifests/crds/ -f
manifests/examples/host-allreduce.yaml` against the simulator, the real controller, the real
`ccltune worker` pods (host backend, 4 ranks in 2 pods) and a real redis-server."""

import base64
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_controller_common import ControllerEnv, Redis, SOURCE_DIR, test_failed, tiny_spec, wait_until  # noqa: E402

EXAMPLE = os.path.join(SOURCE_DIR, 'manifests', 'examples', 'host-allreduce.yaml')


class QuickstartTest(unittest.TestCase):
    def setUp(self):
        self.env = ControllerEnv(nodes=2)
        self.addCleanup(lambda: self.env.close(failed=test_failed(self)))
        # Started before the CRD exists, as in a fresh cluster: it must keep retrying its list.
        self.ctl = self.env.start_controller(wait_ready=False)

    def test_host_allreduce_example_succeeds_publishes_and_is_cleaned_after_ttl(self):
        env = self.env
        crds = os.path.join(SOURCE_DIR, 'manifests', 'crds')
        # kubectl resolves every kind before it creates anything, so a CR in the same apply as
        # its brand-new CRD fails ("ensure CRDs are installed first") on any cluster: install
        # the CRD first, as a cluster admin would, then run the quickstart command itself.
        env.kubectl('apply', '-f', crds)
        env.kubectl('wait', '--for', 'condition=established', '--timeout=30s',
                    'crd/collectivetuningjobs.ccltune.io')
        self.ctl.wait_ready()
        env.kubectl('apply', '-f', crds, '-f', EXAMPLE)
        st = env.wait_phase('host-allreduce', ('Succeeded', 'Failed'), timeout=90)
        self.assertEqual(st['phase'], 'Succeeded', st)
        # kubectl's printer columns come from the CRD.
        out = env.kubectl('get', 'ctj').stdout
        self.assertRegex(out, r'host-allreduce\s+Succeeded\s+4\s+')
        # Conditions, in metav1.Condition shape.
        conds = {c['type']: c for c in st['conditions']}
        for t in ('Validated', 'PodsScheduled', 'Complete'):
            self.assertEqual(conds[t]['status'], 'True', conds)
            for f in ('reason', 'message', 'lastTransitionTime', 'observedGeneration'):
                self.assertIn(f, conds[t])
        self.assertEqual(conds['Failed']['status'], 'False')
        # Winners: allReduce fp32 at 1KiB, 4KiB, 16KiB, 64KiB, 256KiB (factor 4).
        res = st['results']
        self.assertEqual(res['problems'], 5, res)
        self.assertEqual(sorted(w['bytes'] for w in res['winners']), [1024, 4096, 16384, 65536, 262144])
        for w in res['winners']:
            self.assertEqual((w['op'], w['dtype']), ('allReduce', 'fp32'))
            self.assertTrue(w['choice'])
            self.assertGreater(w['timeUs'], 0)
        self.assertGreater(res['speedupGeomean'], 0)
        self.assertTrue(st['fingerprint'])
        self.assertIn('waitMs', st['preSync'])
        self.assertEqual(st['pods']['total'], 2)
        self.assertEqual(st['pods']['succeeded'], 2)
        # The env contract reached the pods.
        pods = env.pods('host-allreduce')
        self.assertEqual(sorted(p['metadata']['name'] for p in pods), ['host-allreduce-a0-0', 'host-allreduce-a0-1'])
        envs = {e['name']: e for e in pods[0]['spec']['containers'][0]['env']}
        for k in ('CCLTUNE_JOB_ID', 'CCLTUNE_ATTEMPT', 'CCLTUNE_POD_INDEX', 'CCLTUNE_WORLD_SIZE',
                  'CCLTUNE_RANKS_PER_POD', 'CCLTUNE_REDIS_URL', 'CCLTUNE_PLAN_FILE', 'CCLTUNE_BACKEND'):
            self.assertIn(k, envs)
        self.assertEqual(envs['CCLTUNE_RANKS_PER_POD']['value'], '2')
        self.assertEqual(pods[0]['metadata']['ownerReferences'][0]['kind'], 'CollectiveTuningJob')
        # Redis holds the published records for the status's fingerprint.
        fp = st['fingerprint']
        self.assertEqual(len(env.redis.keys('ccltune:v1:result:%s:*' % fp)), 5)
        uid = env.job('host-allreduce')['metadata']['uid']
        self.assertTrue(env.redis.keys('ccltune:v1:job:%s:*' % uid), 'attempt keys before deletion')
        # Results API and metrics of the controller.
        code, body = self.ctl.get('/api/v1/results?fingerprint=%s&op=allReduce&dtype=fp32&bytes=2000' % fp)
        self.assertEqual(code, 200, body)
        self.assertIn('"winner"', body)
        self.assertEqual(self.ctl.metric('ccltune_jobs', 'phase="Succeeded"'), 1)
        metrics = self.ctl.get('/metrics')[1]
        self.assertIn('ccltune_job_presync_wait_seconds{namespace="default",job="host-allreduce"}', metrics)
        self.assertGreaterEqual(self.ctl.metric('ccltune_job_duration_seconds_count'), 1)
        self.assertGreaterEqual(self.ctl.metric('ccltune_cache_entries'), 0)
        events = env.kubectl('get', 'events', '--field-selector', 'involvedObject.name=host-allreduce').stdout
        self.assertIn('AttemptStarted', events)
        self.assertIn('Succeeded', events)
        check = subprocess.run(['promtool', 'check', 'metrics'], input=metrics, capture_output=True, text=True)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        # TTL: shorten it; the job, its pods and its Redis attempt keys go; the records stay.
        env.kubectl('patch', 'ctj', 'host-allreduce', '--type', 'merge', '-p', '{"spec":{"ttlSecondsAfterFinished":2}}')
        wait_until(lambda: env.job('host-allreduce') is None, 30, 'job deleted after its TTL')
        wait_until(lambda: not env.pods('host-allreduce'), 30, 'pods gone after the TTL')
        wait_until(lambda: not env.redis.keys('ccltune:v1:job:%s:*' % uid), 10, 'attempt keys removed by the finalizer')
        self.assertEqual(len(env.redis.keys('ccltune:v1:result:%s:*' % fp)), 5)


class OwnRedisPasswordTest(unittest.TestCase):
    """A job whose cache is another Redis, guarded by a password in the job's own Secret: the
    pods get it by reference, the controller reads the Secret for progress, the summary and
    cleanup, and the password shows up nowhere (status, events, controller log)."""

    def setUp(self):
        self.env = ControllerEnv(nodes=1)
        self.addCleanup(lambda: self.env.close(failed=test_failed(self)))
        own_dir = os.path.join(self.env.dir, 'own')
        os.makedirs(own_dir)
        self.own = Redis(own_dir, password='team-redis-pw')
        self.addCleanup(self.own.stop)

    def test_job_with_its_own_redis_secret_succeeds_and_is_cleaned(self):
        env = self.env
        env.install_crd()
        ctl = env.start_controller()
        code, body = env.api('POST', '/api/v1/namespaces/default/secrets', {
            'apiVersion': 'v1', 'kind': 'Secret', 'metadata': {'name': 'team-redis'},
            'data': {'pw': base64.b64encode(b'team-redis-pw').decode()}})
        self.assertEqual(code, 201, body)
        env.create_job('own-redis', tiny_spec(world=2, per_pod=1, cache={
            'redisURL': self.own.url, 'passwordSecretRef': {'name': 'team-redis', 'key': 'pw'}}))
        st = env.wait_phase('own-redis', ('Succeeded', 'Failed'), timeout=60)
        self.assertEqual(st['phase'], 'Succeeded', st)
        self.assertEqual(st['results']['problems'], 1, st)
        fp = st['fingerprint']
        self.assertEqual(len(self.own.keys('ccltune:v1:result:%s:*' % fp)), 1)
        self.assertEqual(env.redis.keys('ccltune:v1:*'), [], 'nothing went to the default Redis')
        uid = env.job('own-redis')['metadata']['uid']
        env.kubectl('delete', 'ctj', 'own-redis', '--wait=false')
        wait_until(lambda: env.job('own-redis') is None, 30, 'job deleted')
        self.assertEqual(self.own.keys('ccltune:v1:job:%s:*' % uid), [], 'finalizer cleaned the own Redis')
        events = env.kubectl('get', 'events', '-o', 'json').stdout
        for text in (json.dumps(st), events, ctl.logs()):
            self.assertNotIn('team-redis-pw', text)


class HttpsTokenTest(unittest.TestCase):
    """Against an HTTPS API server that demands a bearer token: the controller uses the
    kubeconfig's server, certificate-authority-data and token (kubectl drives the test)."""

    def setUp(self):
        self.env = ControllerEnv(nodes=1, sim_args=['--https'], token='s3cret-token')
        self.addCleanup(lambda: self.env.close(failed=test_failed(self)))

    def test_controller_runs_a_job_over_https_with_a_token(self):
        env = self.env
        self.assertTrue(env.sim.url.startswith('https://'))
        env.kubectl('apply', '-f', os.path.join(SOURCE_DIR, 'manifests', 'crds'))
        ctl = env.start_controller()
        doc = {'apiVersion': 'ccltune.io/v1alpha1', 'kind': 'CollectiveTuningJob',
               'metadata': {'name': 'tls'}, 'spec': tiny_spec()}
        env.kubectl('apply', '-f', '-', input=json.dumps(doc))

        def phase():
            r = env.kubectl('get', 'ctj', 'tls', '-o', 'jsonpath={.status.phase}', check=False)
            return r.stdout if r.stdout in ('Succeeded', 'Failed') else None
        self.assertEqual(wait_until(phase, 60, 'job over https'), 'Succeeded')
        self.assertNotIn('s3cret-token', ctl.logs())


class NamespaceScopeTest(unittest.TestCase):
    """--namespace limits the controller to one namespace; jobs elsewhere are left alone."""

    def setUp(self):
        self.env = ControllerEnv(nodes=1)
        self.addCleanup(lambda: self.env.close(failed=test_failed(self)))

    def test_controller_watching_one_namespace_ignores_the_others(self):
        env = self.env
        env.install_crd()
        env.kubectl('create', 'namespace', 'team-a')
        env.start_controller(extra_args=['--namespace', 'team-a'])
        for ns in ('team-a', 'default'):
            doc = {'apiVersion': 'ccltune.io/v1alpha1', 'kind': 'CollectiveTuningJob',
                   'metadata': {'name': 'scoped', 'namespace': ns}, 'spec': tiny_spec()}
            env.kubectl('apply', '-f', '-', input=json.dumps(doc))

        def phase(ns):
            r = env.kubectl('get', 'ctj', 'scoped', '-n', ns, '-o', 'jsonpath={.status.phase}', check=False)
            return r.stdout
        self.assertEqual(wait_until(lambda: phase('team-a') in ('Succeeded', 'Failed') and phase('team-a'),
                                    60, 'team-a job'), 'Succeeded')
        self.assertEqual(phase('default'), '', 'a job outside --namespace must not be touched')
        self.assertEqual(env.pods(), [], 'no pods in default')


if __name__ == '__main__':
    unittest.main()

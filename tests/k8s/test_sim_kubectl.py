"""The simulator driven by the real `kubectl` (1.32 on PATH): discovery, apply (client-side
with default validation, and --server-side), get with short names and printer columns,
-o json/yaml/jsonpath, patch, label, wait, get -w, delete, logs, api-resources, explain."""

import json
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'sim'))

from simfixture import Simulator  # noqa: E402

TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'sim', 'testdata')


class KubectlTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sim = Simulator(node_agent=True).start()

    @classmethod
    def tearDownClass(cls):
        cls.sim.stop()

    def k(self, *a, **kw):
        return self.sim.kubectl(*a, **kw)

    def test_01_apply_get_delete(self):
        # CRD and CR in one apply: as with a real API server, the CR's mapping is resolved before the CRD exists
        r = self.k('apply', '-f', os.path.join(TESTDATA, 'crd.yaml'), '-f', os.path.join(TESTDATA, 'ctj.yaml'), check=False)
        self.assertIn('customresourcedefinition.apiextensions.k8s.io/collectivetuningjobs.ccltune.io created', r.stdout)
        self.assertIn('ensure CRDs are installed first', r.stderr)
        self.k('wait', '--for=condition=established', 'crd/collectivetuningjobs.ccltune.io', '--timeout=10s')
        self.assertIn('collectivetuningjob.ccltune.io/demo created', self.k('apply', '-f', os.path.join(TESTDATA, 'ctj.yaml')).stdout)
        self.assertIn('unchanged', self.k('apply', '-f', os.path.join(TESTDATA, 'ctj.yaml')).stdout)
        changed = open(os.path.join(TESTDATA, 'ctj.yaml')).read().replace('worldSize: 2', 'worldSize: 4')
        self.assertIn('configured', self.k('apply', '-f', '-', input=changed).stdout)
        obj = json.loads(self.k('get', 'ctj', 'demo', '-o', 'json').stdout)
        self.assertEqual((obj['spec']['worldSize'], obj['metadata']['generation']), (4, 2))
        self.assertIn('kubectl.kubernetes.io/last-applied-configuration', obj['metadata']['annotations'])
        self.k('patch', 'ctj', 'demo', '--subresource', 'status', '--type', 'merge',
               '-p', '{"status":{"phase":"Running","results":{"speedupGeomean":1.5}}}')
        lines = self.k('get', 'ctj').stdout.splitlines()
        self.assertEqual(lines[0].split(), ['NAME', 'PHASE', 'WORLD', 'SPEEDUP', 'AGE'])
        self.assertEqual(lines[1].split()[:4], ['demo', 'Running', '4', '1.5'])
        self.assertEqual(self.k('get', 'collectivetuningjobs.ccltune.io', 'demo', '-o', 'jsonpath={.status.phase}').stdout,
                         'Running')
        self.k('wait', '--for=jsonpath={.status.phase}=Running', 'ctj/demo', '--timeout=5s')
        self.k('label', 'ctj', 'demo', 'team=b', '--overwrite')
        self.assertIn('team=b', self.k('get', 'ctj', '--show-labels').stdout)
        self.assertEqual(self.k('get', 'ctj', '-l', 'team=b', '-o', 'name').stdout.strip(), 'collectivetuningjob.ccltune.io/demo')
        self.assertIn('collectivetuningjobs', self.k('api-resources', '--api-group=ccltune.io').stdout)
        self.assertIn('KIND:       CollectiveTuningJob', self.k('explain', 'ctj').stdout)
        self.assertIn('"demo" deleted', self.k('delete', 'ctj', 'demo').stdout)
        self.assertIn('No resources found', self.k('get', 'ctj').stderr)

    def test_02_invalid_and_unknown_fields(self):
        self.k('apply', '-f', os.path.join(TESTDATA, 'crd.yaml'))
        bad = ('apiVersion: ccltune.io/v1alpha1\nkind: CollectiveTuningJob\nmetadata: {name: bad}\n'
               'spec: {worldSize: 3, gpusPerPod: 2, backend: tcp}\n')
        r = self.k('apply', '-f', '-', input=bad, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('is invalid', r.stderr)
        self.assertIn('Unsupported value: "tcp"', r.stderr)
        self.assertIn('worldSize must be a multiple of gpusPerPod', r.stderr)
        unknown = ('apiVersion: ccltune.io/v1alpha1\nkind: CollectiveTuningJob\nmetadata: {name: unk}\n'
                   'spec: {worldSize: 1, wat: 1}\n')
        r = self.k('apply', '-f', '-', input=unknown, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('unknown field "spec.wat"', r.stderr)

    def test_03_server_side_apply_and_watch(self):
        self.k('apply', '-f', os.path.join(TESTDATA, 'crd.yaml'))
        w = subprocess.Popen(['kubectl', '--kubeconfig', self.sim.kubeconfig, '--cache-dir', os.path.join(self.sim.dir, 'kubectl-cache'),
                              'get', 'ctj', '-w', '--no-headers'],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        self.assertIn('serverside-applied', self.k('apply', '--server-side', '-f', os.path.join(TESTDATA, 'ctj.yaml')).stdout)
        self.k('patch', 'ctj', 'demo', '--subresource', 'status', '--type', 'merge', '-p', '{"status":{"phase":"Succeeded"}}')
        time.sleep(1.0)
        w.terminate()
        out, _ = w.communicate(timeout=10)
        rows = [l.split() for l in out.splitlines() if l.strip()]
        self.assertEqual([r[0] for r in rows[:2]], ['demo', 'demo'], out)
        self.assertEqual(rows[-1][1], 'Succeeded', out)
        self.k('delete', 'ctj', 'demo')

    def test_04_pods_logs_and_table(self):
        self.k('run', 'hello', '--image=busybox', '--restart=Never', '--', 'sh', '-c', 'echo hello from pod')
        self.sim.wait_for(lambda: 'Completed' in self.k('get', 'pod', 'hello').stdout, timeout=20)
        self.assertEqual(self.k('logs', 'hello').stdout, 'hello from pod\n')
        lines = self.k('get', 'pods', '-o', 'wide').stdout.splitlines()
        self.assertEqual(lines[0].split()[:7], ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE'])
        self.assertEqual(lines[1].split()[5:7], ['127.0.0.1', 'node-0'])
        self.assertIn('node-0', self.k('get', 'nodes').stdout)
        self.k('run', 'follow', '--image=busybox', '--restart=Never', '--', 'sh', '-c',
               'for i in 1 2 3; do echo line $i; sleep 0.3; done')
        self.sim.wait_for(lambda: 'Running' in self.k('get', 'pod', 'follow').stdout
                          or 'Completed' in self.k('get', 'pod', 'follow').stdout, timeout=20)
        self.assertEqual(self.k('logs', '-f', 'follow', timeout=20).stdout, 'line 1\nline 2\nline 3\n')
        self.assertEqual(self.k('logs', '--tail=1', 'follow').stdout, 'line 3\n')
        self.k('delete', 'pod', 'follow')
        self.k('delete', 'pod', 'hello')
        self.k('run', 'sleeper', '--image=busybox', '--restart=Never', '--', 'sleep', '60')
        self.sim.wait_for(lambda: 'Running' in self.k('get', 'pod', 'sleeper').stdout, timeout=20)
        t0 = time.monotonic()
        self.k('delete', 'pod', 'sleeper')          # waits until the process is gone and the pod removed
        self.assertLess(time.monotonic() - t0, 10)
        self.assertIn('NotFound', self.k('get', 'pod', 'sleeper', check=False).stderr)

    def test_05_namespaces(self):
        self.k('create', 'namespace', 'team-a')
        self.k('create', 'configmap', 'x', '-n', 'team-a', '--from-literal=a=b')
        self.assertIn('default', self.k('get', 'sa', '-n', 'team-a').stdout)
        self.k('delete', 'namespace', 'team-a', '--timeout=20s')
        self.assertNotEqual(self.k('get', 'namespace', 'team-a', check=False).returncode, 0)


if __name__ == '__main__':
    unittest.main()

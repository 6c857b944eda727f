"""Many nodes (issue 33) through the operator: a CollectiveTuningJob of worldSize 4 in pods of
2 ranks (host backend) on the simulator's two nodes. The controller's pod spec asks for the
node name through the downward API (spec.nodeName); the node agent resolves it as the
kubelet does, for the node the pod was bound to; the workers group their ranks by it, so the
job's fingerprint and status say nodes 2, gpusPerNode 2 when the pods landed on two nodes and
nodes 1 when both landed on one. The real controller, real `ccltune worker` processes and a
real redis-server; only the API server is simulated."""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_controller_common import ControllerEnv, test_failed, tiny_spec  # noqa: E402


class NodesTest(unittest.TestCase):
    def setUp(self):
        self.env = ControllerEnv(nodes=2)
        self.addCleanup(lambda: self.env.close(failed=test_failed(self)))
        self.env.install_crd()
        self.env.kubectl('wait', '--for', 'condition=established', 'crd/collectivetuningjobs.ccltune.io')
        self.env.start_controller()

    def run_job(self, name, **over):
        self.env.create_job(name, tiny_spec(world=4, per_pod=2, **over))
        st = self.env.wait_phase(name, ('Succeeded', 'Failed'), timeout=120)
        self.assertEqual(st['phase'], 'Succeeded', st)
        return st, self.env.pods(name)

    def fingerprint_info(self, st):
        return json.loads(self.env.redis.cli('GET', 'ccltune:v1:fp:%s' % st['fingerprint']))

    def assert_node_name_from_downward_api(self, pod):
        env = {e['name']: e for e in pod['spec']['containers'][0]['env']}
        self.assertEqual(env['CCLTUNE_NODE_NAME'], {'name': 'CCLTUNE_NODE_NAME',
                                                    'valueFrom': {'fieldRef': {'fieldPath': 'spec.nodeName'}}})

    def test_pods_on_two_nodes_make_a_two_node_fingerprint(self):
        st, pods = self.run_job('spread')
        landed = sorted(p['spec']['nodeName'] for p in pods)
        self.assertEqual(landed, ['node-0', 'node-1'])  # the scheduler spreads by pod count
        for p in pods:
            self.assert_node_name_from_downward_api(p)
        self.assertEqual((st['results']['nodes'], st['results']['gpusPerNode']), (2, 2), st['results'])
        fp = self.fingerprint_info(st)
        self.assertEqual((fp['nodes'], fp['gpusPerNode']), (2, 2), fp)
        self.assertNotIn('ncclTopology', st['results'])  # the host backend runs no NCCL

    def test_pods_on_one_node_make_a_one_node_fingerprint(self):
        st, pods = self.run_job('packed', template={'nodeSelector': {'kubernetes.io/hostname': 'node-1'}})
        self.assertEqual([p['spec']['nodeName'] for p in pods], ['node-1', 'node-1'])
        for p in pods:
            self.assert_node_name_from_downward_api(p)
        self.assertEqual((st['results']['nodes'], st['results']['gpusPerNode']), (1, 4), st['results'])
        fp = self.fingerprint_info(st)
        self.assertEqual((fp['nodes'], fp['gpusPerNode']), (1, 4), fp)


if __name__ == '__main__':
    unittest.main()

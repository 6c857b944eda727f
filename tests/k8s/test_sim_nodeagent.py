"""The simulator's node agent: scheduling, pods as local processes, exit codes, kill -9,
graceful deletion, env/secret/configMap resolution, ConfigMap volumes, `ccltune` mapping, logs."""

import os
import signal
import stat
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'sim'))

from simfixture import Simulator  # noqa: E402
from kubernetes import client, config, watch  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402


def pod(name, command, **spec):
    c = {'name': 'main', 'image': 'busybox', 'command': command}
    c.update(spec.pop('container', {}))
    body = {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': name, 'labels': spec.pop('labels', {})},
            'spec': dict({'restartPolicy': 'Never', 'containers': [c]}, **spec)}
    return body


class NodeAgentTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='ccltune-fakebin-')
        cls.fake = os.path.join(cls.tmp, 'ccltune')
        with open(cls.fake, 'w') as f:
            f.write('#!/bin/sh\necho "fake-ccltune $*"\necho "idx=$CCLTUNE_POD_INDEX pw=$REDIS_PASSWORD"\n'
                    'for a in "$@"; do case "$a" in --plan=*) cat "${a#--plan=}";; esac; done\n')
        os.chmod(cls.fake, stat.S_IRWXU)
        cls.sim = Simulator(node_agent=True, nodes=2,
                            extra_args=['--ccltune-bin', cls.fake, '--node-resources', 'nvidia.com/gpu=8']).start()
        cls.api = config.new_client_from_config(config_file=cls.sim.kubeconfig)
        cls.core = client.CoreV1Api(cls.api)

    @classmethod
    def tearDownClass(cls):
        cls.api.close()
        cls.sim.stop()
        import shutil
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def wait_phase(self, name, phases, timeout=20):
        return self.sim.wait_for(lambda: (lambda p: p if p.status.phase in phases else None)(
            self.core.read_namespaced_pod(name, 'default')), timeout=timeout)

    def test_exit_code_and_log(self):
        self.core.create_namespaced_pod('default', pod('exit3', ['sh', '-c', 'echo hi; exit 3']))
        p = self.wait_phase('exit3', ('Failed', 'Succeeded'))
        self.assertEqual(p.status.phase, 'Failed')
        t = p.status.container_statuses[0].state.terminated
        self.assertEqual((t.exit_code, t.reason), (3, 'Error'))
        self.assertEqual(p.spec.node_name in ('node-0', 'node-1'), True)
        self.assertEqual(p.status.pod_ip, '127.0.0.1')
        self.assertTrue(p.status.start_time)
        self.assertEqual(self.core.read_namespaced_pod_log('exit3', 'default'), 'hi\n')
        self.assertEqual(self.sim.kubectl('logs', 'exit3').stdout, 'hi\n')
        self.core.create_namespaced_pod('default', pod('ok', ['true']))
        p = self.wait_phase('ok', ('Failed', 'Succeeded'))
        self.assertEqual(p.status.phase, 'Succeeded')
        self.assertEqual(p.status.container_statuses[0].state.terminated.reason, 'Completed')
        for n in ('exit3', 'ok'):
            self.core.delete_namespaced_pod(n, 'default')      # terminal pods go at once
            self.assertRaises(ApiException, self.core.read_namespaced_pod, n, 'default')

    def terminated(self, name, command, policy=None):
        c = {'terminationMessagePolicy': policy} if policy else {}
        self.core.create_namespaced_pod('default', pod(name, ['sh', '-c', command], container=c))
        p = self.wait_phase(name, ('Failed', 'Succeeded'))
        return p.status.container_statuses[0].state.terminated

    def test_termination_message_file_as_the_kubelet_reads_it(self):
        # The process finds its termination-log file in CCLTUNE_TERMINATION_LOG (the kubelet
        # would mount it at terminationMessagePath, /dev/termination-log by default).
        t = self.terminated('tm-file', 'echo "log line"; printf "the reason" > "$CCLTUNE_TERMINATION_LOG"; exit 1')
        self.assertEqual((t.exit_code, t.message), (1, 'the reason'))
        t = self.terminated('tm-ok', 'printf done > "$CCLTUNE_TERMINATION_LOG"')
        self.assertEqual((t.exit_code, t.message), (0, 'done'), 'a message is reported on success too')
        t = self.terminated('tm-none', 'echo "only a log"; exit 2')
        self.assertIsNone(t.message, 'policy File (the default) never falls back to the log')
        t = self.terminated('tm-big', 'head -c 5000 /dev/zero | tr "\\0" a > "$CCLTUNE_TERMINATION_LOG";'
                            'printf END >> "$CCLTUNE_TERMINATION_LOG"; exit 1')
        self.assertEqual((len(t.message), t.message[-3:]), (4096, 'END'), 'the last 4096 bytes')

    def test_fallback_to_logs_on_error_takes_the_log_tail_only_without_a_file(self):
        t = self.terminated('tm-fb', 'for i in $(seq 1 100); do echo "line $i"; done; echo "error: why" >&2; exit 1',
                            'FallbackToLogsOnError')
        lines = t.message.splitlines()
        self.assertEqual((len(lines), lines[0], lines[-1]), (80, 'line 22', 'error: why'))
        t = self.terminated('tm-fb-file', 'echo noise; printf "from the file" > "$CCLTUNE_TERMINATION_LOG"; exit 1',
                            'FallbackToLogsOnError')
        self.assertEqual(t.message, 'from the file')
        t = self.terminated('tm-fb-ok', 'echo fine', 'FallbackToLogsOnError')
        self.assertIsNone(t.message, 'no fallback for a container that succeeded')
        t = self.terminated('tm-fb-long', 'head -c 3000 /dev/zero | tr "\\0" b; echo; echo last; exit 1',
                            'FallbackToLogsOnError')
        self.assertLessEqual(len(t.message), 2048)
        self.assertTrue(t.message.endswith('last\n'), t.message[-20:])

    def test_downward_api_node_name_is_the_bound_node(self):
        # As the kubelet: fieldRef spec.nodeName is the node the scheduler bound the pod to.
        env = [{'name': 'NODE', 'valueFrom': {'fieldRef': {'fieldPath': 'spec.nodeName'}}}]
        for name, node in (('where0', 'node-0'), ('where1', 'node-1')):
            self.core.create_namespaced_pod('default', pod(name, ['sh', '-c', 'echo "on=$NODE"'],
                                                           container={'env': env},
                                                           nodeSelector={'kubernetes.io/hostname': node}))
        for name, node in (('where0', 'node-0'), ('where1', 'node-1')):
            p = self.wait_phase(name, ('Failed', 'Succeeded'))
            self.assertEqual((p.status.phase, p.spec.node_name), ('Succeeded', node))
            self.assertEqual(self.core.read_namespaced_pod_log(name, 'default'), 'on=%s\n' % node)
            self.core.delete_namespaced_pod(name, 'default')

    def test_phase_transitions_seen_by_watch(self):
        rv = self.core.list_namespaced_pod('default').metadata.resource_version
        self.core.create_namespaced_pod('default', pod('trans', ['sh', '-c', 'sleep 0.5'], labels={'t': 'x'}))
        phases = []
        for ev in watch.Watch().stream(self.core.list_namespaced_pod, 'default', label_selector='t=x',
                                       resource_version=rv, timeout_seconds=10):
            ph = ev['object'].status.phase
            if not phases or phases[-1] != ph:
                phases.append(ph)
            if ph == 'Succeeded':
                break
        self.assertEqual(phases, ['Pending', 'Running', 'Succeeded'])
        self.core.delete_namespaced_pod('trans', 'default')

    def test_kill_9_gives_137(self):
        self.core.create_namespaced_pod('default', pod('victim', ['sleep', '60']))
        self.wait_phase('victim', ('Running',))
        pid = self.sim.wait_for(lambda: self.sim.pid_of('victim'))
        os.kill(pid, signal.SIGKILL)
        p = self.wait_phase('victim', ('Failed',))
        self.assertEqual(p.status.container_statuses[0].state.terminated.exit_code, 137)
        self.core.delete_namespaced_pod('victim', 'default')
        # the same through the control endpoint, with SIGTERM -> 143
        self.core.create_namespaced_pod('default', pod('victim2', ['sleep', '60']))
        self.wait_phase('victim2', ('Running',))
        self.sim.wait_for(lambda: self.sim.pid_of('victim2'))
        self.sim.control('POST', '/_sim/kill', {'namespace': 'default', 'name': 'victim2', 'signal': 15})
        p = self.wait_phase('victim2', ('Failed',))
        self.assertEqual(p.status.container_statuses[0].state.terminated.exit_code, 143)
        self.core.delete_namespaced_pod('victim2', 'default')

    def test_graceful_delete_kills_process(self):
        self.core.create_namespaced_pod('default', pod('longrun', ['sleep', '60'], terminationGracePeriodSeconds=30))
        self.wait_phase('longrun', ('Running',))
        pid = self.sim.wait_for(lambda: self.sim.pid_of('longrun'))
        t0 = time.monotonic()
        d = self.core.delete_namespaced_pod('longrun', 'default')
        self.assertTrue(d.metadata.deletion_timestamp)
        self.sim.wait_for(lambda: not [p for p in self.core.list_namespaced_pod('default').items
                                       if p.metadata.name == 'longrun'], timeout=10)
        self.assertLess(time.monotonic() - t0, 8)
        self.assertRaises(ProcessLookupError, os.kill, pid, 0)
        # SIGTERM ignored -> SIGKILL after the grace period (capped at 5 s)
        self.core.create_namespaced_pod('default', pod('stubborn', ['sh', '-c', 'trap "" TERM; sleep 60 & wait; sleep 60'],
                                                       terminationGracePeriodSeconds=1))
        self.wait_phase('stubborn', ('Running',))
        t0 = time.monotonic()
        self.sim.kubectl('delete', 'pod', 'stubborn', '--wait=true', '--timeout=20s')
        self.assertLess(time.monotonic() - t0, 8)

    def test_unschedulable_stays_pending(self):
        self.core.create_namespaced_pod('default', pod('nosel', ['true'], nodeSelector={'gpu': 'h200'}))
        self.core.create_namespaced_pod('default', pod('nosched', ['true'], schedulerName='volcano'))
        self.core.create_namespaced_pod('default', pod('toobig', ['true'], container={
            'resources': {'limits': {'nvidia.com/gpu': '9'}}}))
        time.sleep(1.5)
        for n in ('nosel', 'nosched', 'toobig'):
            p = self.core.read_namespaced_pod(n, 'default')
            self.assertEqual(p.status.phase, 'Pending', n)
            self.assertFalse(p.spec.node_name, n)
        conds = self.core.read_namespaced_pod('nosel', 'default').status.conditions
        self.assertEqual([(c.type, c.status, c.reason) for c in conds], [('PodScheduled', 'False', 'Unschedulable')])
        self.assertIn('Insufficient nvidia.com/gpu', self.core.read_namespaced_pod('toobig', 'default').status.conditions[0].message)
        self.assertIsNone(self.core.read_namespaced_pod('nosched', 'default').status.conditions)
        for n in ('nosel', 'nosched', 'toobig'):
            self.core.delete_namespaced_pod(n, 'default')
        # a GPU pod that fits is scheduled
        self.core.create_namespaced_pod('default', pod('gpu8', ['true'], container={
            'resources': {'limits': {'nvidia.com/gpu': '8'}}}))
        self.wait_phase('gpu8', ('Succeeded',))
        self.core.delete_namespaced_pod('gpu8', 'default')

    def test_env_volumes_and_ccltune_mapping(self):
        self.core.create_namespaced_secret('default', client.V1Secret(metadata=client.V1ObjectMeta(name='redis'),
                                                                      string_data={'password': 's3cret'}))
        self.core.create_namespaced_config_map('default', client.V1ConfigMap(metadata=client.V1ObjectMeta(name='plan'),
                                                                             data={'plan.json': '{"plan": 1}'}))
        body = pod('worker', ['ccltune'], container={
            'args': ['worker', '--plan=/etc/ccltune/plan.json'],
            'env': [{'name': 'CCLTUNE_POD_INDEX', 'value': '3'},
                    {'name': 'REDIS_PASSWORD', 'valueFrom': {'secretKeyRef': {'name': 'redis', 'key': 'password'}}}],
            'volumeMounts': [{'name': 'plan', 'mountPath': '/etc/ccltune'}]},
            volumes=[{'name': 'plan', 'configMap': {'name': 'plan'}}])
        self.core.create_namespaced_pod('default', body)
        p = self.wait_phase('worker', ('Succeeded', 'Failed'))
        log = self.core.read_namespaced_pod_log('worker', 'default')
        self.assertEqual(p.status.phase, 'Succeeded', log)
        lines = log.splitlines()
        self.assertTrue(lines[0].startswith('fake-ccltune worker --plan=/'), lines)
        self.assertTrue(lines[0].endswith('/etc/ccltune/plan.json'), lines)
        self.assertNotEqual(lines[0], 'fake-ccltune worker --plan=/etc/ccltune/plan.json')
        self.assertEqual(lines[1:], ['idx=3 pw=s3cret', '{"plan": 1}'])
        self.core.delete_namespaced_pod('worker', 'default')
        # a missing secret keeps the pod Pending with CreateContainerConfigError
        body = pod('nosecret', ['true'], container={
            'env': [{'name': 'X', 'valueFrom': {'secretKeyRef': {'name': 'absent', 'key': 'k'}}}]})
        self.core.create_namespaced_pod('default', body)
        p = self.sim.wait_for(lambda: (lambda p: p if p.status.container_statuses else None)(
            self.core.read_namespaced_pod('nosecret', 'default')))
        self.assertEqual(p.status.phase, 'Pending')
        self.assertEqual(p.status.container_statuses[0].state.waiting.reason, 'CreateContainerConfigError')
        self.core.delete_namespaced_pod('nosecret', 'default')

    def test_owned_pods_cascade_and_kubectl_table(self):
        owner = self.core.create_namespaced_config_map('default', client.V1ConfigMap(metadata=client.V1ObjectMeta(name='owner')))
        body = pod('owned', ['sleep', '60'])
        body['metadata']['ownerReferences'] = [{'apiVersion': 'v1', 'kind': 'ConfigMap', 'name': 'owner',
                                                'uid': owner.metadata.uid, 'controller': True, 'blockOwnerDeletion': True}]
        self.core.create_namespaced_pod('default', body)
        self.wait_phase('owned', ('Running',))
        out = self.sim.kubectl('get', 'pods', 'owned').stdout.splitlines()
        self.assertEqual(out[0].split(), ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'])
        self.assertEqual(out[1].split()[:4], ['owned', '1/1', 'Running', '0'])
        self.core.delete_namespaced_config_map('owner', 'default')
        self.sim.wait_for(lambda: not [p for p in self.core.list_namespaced_pod('default').items
                                       if p.metadata.name == 'owned'], timeout=15)


class ShutdownTest(unittest.TestCase):
    def test_sigterm_kills_pod_processes(self):
        sim = Simulator(node_agent=True).start()
        try:
            api = config.new_client_from_config(config_file=sim.kubeconfig)
            core = client.CoreV1Api(api)
            core.create_namespaced_pod('default', pod('sleeper', ['sleep', '60']))
            pid = sim.wait_for(lambda: sim.pid_of('sleeper'))
            api.close()
        finally:
            sim.proc.send_signal(signal.SIGTERM)
            self.assertEqual(sim.proc.wait(timeout=15), 0)
            sim.stop()
        time.sleep(0.2)
        self.assertRaises(ProcessLookupError, os.kill, pid, 0)


if __name__ == '__main__':
    unittest.main()

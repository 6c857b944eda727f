"""24 invalid CollectiveTuningJob specs. With the real CRD each is rejected either by the
API server's schema (enums, minimums, CEL) or by the controller (Validated=False), always with
a message naming the field. With a permissive CRD (schema accepts anything) the controller
alone must reject every one: its validation does not depend on the schema."""

import copy
import json
import os
import sys
import tempfile
import unittest

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_controller_common import CRD_DIR, SOURCE_DIR, ControllerEnv, test_failed, tiny_spec, wait_until  # noqa: E402


def mutate(path, value):
    """A valid tiny spec with one field (dotted path, [i] for list items) replaced."""
    spec = tiny_spec()
    node = spec
    parts = path.replace('[', '.').replace(']', '').split('.')
    for p in parts[:-1]:
        node = node[int(p)] if p.isdigit() else node.setdefault(p, {})
    last = parts[-1]
    node[int(last) if last.isdigit() else last] = value
    return spec


# (name, spec, field the message must name)
INVALID = [
    ('world-zero', mutate('worldSize', 0), 'worldSize'),
    ('per-pod-zero', mutate('gpusPerPod', 0), 'gpusPerPod'),
    ('not-multiple', dict(tiny_spec(), worldSize=6, gpusPerPod=4), 'worldSize'),
    ('bad-backend', mutate('backend', 'mpi'), 'backend'),
    ('no-collectives', mutate('collectives', []), 'collectives'),
    ('bad-op', mutate('collectives[0].op', 'allreduce'), 'op'),
    ('bad-dtype', mutate('collectives[0].dtypes', ['fp64']), 'dtypes'),
    ('bad-redop', mutate('collectives[0].reduceOp', 'mean'), 'reduceOp'),
    ('decimal-unit', mutate('collectives[0].sizes', ['1KB']), 'sizes'),
    ('zero-size', mutate('collectives[0].sizes', [0]), 'sizes'),
    ('min-over-max', mutate('collectives[0].sizes', {'min': '1MiB', 'max': '1KiB', 'factor': 2}), 'sizes'),
    ('too-large', mutate('collectives[0].sizes', ['4GiB']), 'sizes'),
    ('unknown-choice', mutate('collectives[0].choices', ['warp-drive']), 'choices'),
    ('nccl-choice-on-host', mutate('collectives[0].choices', ['nccl:algo=ring,proto=ll']), 'choices'),
    ('zero-iters', mutate('benchmark.iters', 0), 'iters'),
    ('noise-over-100', mutate('benchmark.noiseThresholdPercent', 200), 'noiseThresholdPercent'),
    ('http-redis', mutate('cache.redisURL', 'http://redis:6379'), 'redisURL'),
    ('password-in-url', mutate('cache.redisURL', 'redis://:hunter2@redis:6379/0'), 'redisURL'),
    ('bad-pull-policy', mutate('template.imagePullPolicy', 'Sometimes'), 'imagePullPolicy'),
    ('negative-backoff', mutate('backoffLimit', -1), 'backoffLimit'),
    ('bad-search', mutate('search', 'greedy'), 'search'),
    ('emulated-nodes-not-dividing', mutate('emulatedNodes', 3), 'emulatedNodes'),
    ('ftp-pushgateway', mutate('metrics.pushgateway', 'ftp://pgw:9091'), 'pushgateway'),
    ('linger-over-600', mutate('metrics.lingerSeconds', 601), 'lingerSeconds'),
]


def permissive_crd(path):
    """The real CRD with its spec schema replaced by 'anything goes'."""
    with open(os.path.join(CRD_DIR, 'ccltune.io_collectivetuningjobs.yaml')) as f:
        crd = yaml.safe_load(f)
    props = crd['spec']['versions'][0]['schema']['openAPIV3Schema']['properties']
    props['spec'] = {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True}
    with open(path, 'w') as f:
        json.dump(crd, f)


class ValidationTest(unittest.TestCase):
    def setUp(self):
        self.env = ControllerEnv(nodes=1)
        self.addCleanup(lambda: self.env.close(failed=test_failed(self)))

    def wait_rejected(self, name, field):
        cond = wait_until(lambda: self.env.condition(name, 'Validated'), 30, 'Validated on %s' % name)
        self.assertEqual((cond['status'], cond['reason']), ('False', 'InvalidSpec'), (name, cond))
        self.assertIn(field, cond['message'], name)
        self.assertIn('spec.', cond['message'], name)
        return cond['message']

    def test_controller_rejects_all_24_without_help_from_the_schema(self):
        self.assertEqual(len(INVALID), 24)
        crd = os.path.join(self.env.dir, 'permissive-crd.json')
        permissive_crd(crd)
        self.env.install_crd(crd)
        self.env.start_controller()
        for name, spec, _ in INVALID:
            self.env.create_job(name, copy.deepcopy(spec))
        for name, _, field in INVALID:
            msg = self.wait_rejected(name, field)
            print('%-20s %s' % (name, msg))
            self.assertNotIn('hunter2', json.dumps(self.env.job(name).get('status')))
        self.assertEqual(self.env.pods(), [], 'an invalid job must not start pods')

    def test_real_crd_rejects_each_at_admission_or_in_the_controller(self):
        self.env.install_crd()
        ctl = self.env.start_controller()
        by_schema, by_controller = 0, 0
        for name, spec, field in INVALID:
            doc = {'apiVersion': 'ccltune.io/v1alpha1', 'kind': 'CollectiveTuningJob',
                   'metadata': {'name': name}, 'spec': spec}
            r = self.env.kubectl('apply', '-f', '-', input=json.dumps(doc), check=False)
            if r.returncode != 0:
                self.assertIn(field, r.stderr, name)
                by_schema += 1
            else:
                self.wait_rejected(name, field)
                by_controller += 1
        print('rejected by the CRD schema: %d, by the controller: %d' % (by_schema, by_controller))
        self.assertEqual(by_schema + by_controller, 24)
        self.assertGreater(by_controller, 0)
        self.assertNotIn('hunter2', ctl.logs())

    def test_every_manifest_and_example_is_accepted_by_the_api_server(self):
        m = os.path.join(SOURCE_DIR, 'manifests')
        self.env.install_crd()
        self.env.kubectl('wait', '--for', 'condition=established', 'crd/collectivetuningjobs.ccltune.io')
        for d in ('rbac', 'controller', 'redis', 'examples'):
            self.env.kubectl('apply', '-f', os.path.join(m, d))
        out = self.env.kubectl('get', 'ctj').stdout
        examples = sorted(f[:-len('.yaml')] for f in os.listdir(os.path.join(m, 'examples'))
                          if f.endswith('.yaml'))
        self.assertIn('nccl-epilogue', examples)
        for name in examples:
            self.assertIn(name, out)


if __name__ == '__main__':
    unittest.main()

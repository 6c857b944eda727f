"""Epilogue fusion (issue 16) through the Kubernetes surfaces: the real CRD admits the
epilogue example and rejects bad epilogue fields at admission, the real controller validates
what the schema cannot (backend, tokens) naming the field, and the results API answers
`epilogue=` queries from records written to a real Redis under the docs/design.md §4/§8 keys."""

import copy
import json
import os
import sys
import unittest
import urllib.parse

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_controller_common import SOURCE_DIR, ControllerEnv, test_failed, wait_until  # noqa: E402

EXAMPLE = os.path.join(SOURCE_DIR, 'manifests', 'examples', 'nccl-epilogue.yaml')
FP = 'e9f1a2b3c4d5e6f7'


def example():
    with open(EXAMPLE) as f:
        return yaml.safe_load(f)


def epilogue_spec(**entry):
    """The example's spec, suspended (no pods: no GPU here), first entry patched."""
    spec = copy.deepcopy(example()['spec'])
    spec['suspend'] = True
    spec['collectives'] = spec['collectives'][:1]
    for k, v in entry.items():
        if v is None:
            spec['collectives'][0].pop(k, None)
        else:
            spec['collectives'][0][k] = v
    return spec


def record(bytes_, winner, epilogue=None):
    r = {'schema': 1, 'fingerprint': FP, 'op': 'allReduce', 'dtype': 'bf16', 'redop': 'sum',
         'bytes': bytes_, 'winner': winner, 'winnerParams': {}, 'timeUs': 10.0,
         'defaultTimeUs': 15.0, 'speedupVsDefault': 1.5, 'busbwGBs': 1.0,
         'choices': [{'name': winner, 'params': {}, 'timeUs': 10.0, 'minUs': 9.0, 'maxUs': 11.0,
                      'busbwGBs': 1.0, 'status': 'ok'}],
         'worldSize': 8, 'tunedAt': '2026-11-22T08:00:00Z', 'jobId': 'j', 'attempt': 0,
         'toolVersion': '0.1.0'}
    if epilogue:
        r['epilogue'] = epilogue
    return r


class EpilogueSchemaTest(unittest.TestCase):
    def setUp(self):
        self.env = ControllerEnv(nodes=1)
        self.addCleanup(lambda: self.env.close(failed=test_failed(self)))
        self.env.install_crd()
        self.env.kubectl('wait', '--for', 'condition=established', 'crd/collectivetuningjobs.ccltune.io')

    def apply(self, name, spec):
        doc = {'apiVersion': 'ccltune.io/v1alpha1', 'kind': 'CollectiveTuningJob',
               'metadata': {'name': name}, 'spec': spec}
        return self.env.kubectl('apply', '-f', '-', input=json.dumps(doc), check=False)

    def test_example_is_admitted_and_validated_by_the_controller(self):
        self.env.start_controller()
        doc = example()
        doc['spec']['suspend'] = True
        self.env.kubectl('apply', '-f', '-', input=json.dumps(doc))
        cond = wait_until(lambda: self.env.condition('nccl-epilogue', 'Validated'), 30, 'Validated')
        self.assertEqual(cond['status'], 'True', cond)
        stored = self.env.job('nccl-epilogue')['spec']['collectives']
        self.assertEqual([c['epilogue']['hidden'] for c in stored], [4096, 8192])
        self.assertEqual(stored[0]['tokens'], [1, 8, 32, 128, 512, 2048])
        self.assertEqual(stored[0]['epilogue']['eps'], 1e-5)
        self.assertEqual(self.env.pods(), [])

    def test_schema_rejects_bad_epilogue_fields_at_admission(self):
        bad = [
            ('kind', epilogue_spec(epilogue={'kind': 'gelu', 'hidden': 4096}), 'kind'),
            ('no-kind', epilogue_spec(epilogue={'hidden': 4096}), 'kind'),
            ('hidden-odd', epilogue_spec(epilogue={'kind': 'bias', 'hidden': 4095}), 'hidden'),
            ('hidden-big', epilogue_spec(epilogue={'kind': 'bias', 'hidden': 16392}), 'hidden'),
            ('eps-zero', epilogue_spec(epilogue={'kind': 'residualRmsNorm', 'hidden': 8, 'eps': 0}), 'eps'),
            ('eps-one', epilogue_spec(epilogue={'kind': 'residualRmsNorm', 'hidden': 8, 'eps': 1}), 'eps'),
            ('both', epilogue_spec(sizes=[4096]), 'tokens'),
            ('neither', epilogue_spec(tokens=None), 'tokens'),
        ]
        for name, spec, field in bad:
            r = self.apply(name, spec)
            self.assertNotEqual(r.returncode, 0, name)
            self.assertIn(field, r.stderr, name)
        self.assertEqual(self.apply('good', epilogue_spec()).returncode, 0)

    def test_controller_names_what_the_schema_cannot_check(self):
        self.env.start_controller()
        cases = [
            ('host-backend', dict(epilogue_spec(), backend='host'), 'spec.collectives[0].epilogue'),
            ('zero-tokens', epilogue_spec(tokens=[0, 8]), 'spec.collectives[0].tokens'),
            ('tokens-range', epilogue_spec(tokens={'min': 64, 'max': 8}), 'spec.collectives[0].tokens'),
            ('int-dtype', epilogue_spec(dtypes=['int32']), 'spec.collectives[0].dtypes'),
            ('gather', epilogue_spec(op='allGather', reduceOp=None), 'spec.collectives[0].epilogue'),
        ]
        for name, spec, _ in cases:
            self.assertEqual(self.apply(name, spec).returncode, 0, name)
        for name, _, field in cases:
            cond = wait_until(lambda: self.env.condition(name, 'Validated'), 30, 'Validated on ' + name)
            self.assertEqual((cond['status'], cond['reason']), ('False', 'InvalidSpec'), (name, cond))
            self.assertIn(field, cond['message'], name)


class EpilogueResultsApiTest(unittest.TestCase):
    def setUp(self):
        self.env = ControllerEnv(nodes=1)
        self.addCleanup(lambda: self.env.close(failed=test_failed(self)))
        self.env.install_crd()
        self.ctl = self.env.start_controller()
        fused = {'kind': 'residualRmsNorm', 'hidden': 4096, 'eps': 1e-5}
        plain_index = 'ccltune:v1:index:%s:allReduce:bf16:sum' % FP
        fused_index = plain_index + ':epilogue=residualRmsNorm,hidden=4096'
        for key_suffix, index, rec in (('', plain_index, record(8192, 'nccl')),
                                       (':epilogue=residualRmsNorm,hidden=4096', fused_index,
                                        record(8192, 'oneshot-fused:blocks=32,mode=pull,threads=512', fused))):
            self.env.redis.cli('SET', 'ccltune:v1:result:%s:allReduce:bf16:sum:8192%s' % (FP, key_suffix),
                               json.dumps(rec))
            self.env.redis.cli('ZADD', index, '8192', '8192')
        self.env.redis.cli('SADD', 'ccltune:v1:fingerprints', FP)

    def get(self, **query):
        q = dict(fingerprint=FP, **query)
        code, body = self.ctl.get('/api/v1/results?' + urllib.parse.urlencode(q))
        return code, json.loads(body)

    def test_epilogue_parameter_selects_the_fused_record(self):
        point = dict(op='allReduce', dtype='bf16', bytes='8KiB')
        code, plain = self.get(**point)
        self.assertEqual(code, 200, plain)
        self.assertEqual(plain['winner'], 'nccl')
        self.assertNotIn('epilogue', plain)
        code, fused = self.get(epilogue='residualRmsNorm,hidden=4096', **point)
        self.assertEqual(code, 200, fused)
        self.assertEqual(fused['winner'], 'oneshot-fused:blocks=32,mode=pull,threads=512')
        self.assertEqual(fused['epilogue'], {'kind': 'residualRmsNorm', 'hidden': 4096, 'eps': 1e-5})
        code, _ = self.get(epilogue='residualRmsNorm,hidden=8192', **point)
        self.assertEqual(code, 404)
        code, err = self.get(epilogue='rmsnorm', **point)
        self.assertEqual(code, 400, err)
        self.assertTrue(err['error'].startswith('epilogue: '), err)
        self.assertIn('epilogue=residualRmsNorm,hidden=4096', err['error'])
        code, listing = self.get(epilogue='residualRmsNorm,hidden=4096')
        self.assertEqual(code, 200, listing)
        self.assertEqual([r['winner'] for r in listing['results']], ['oneshot-fused:blocks=32,mode=pull,threads=512'])


if __name__ == '__main__':
    unittest.main()

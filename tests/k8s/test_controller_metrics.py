"""A tuning job's metrics reach Prometheus and leave with the job: the real controller gives the
pods a Pushgateway (--pushgateway-url) and the job's own linger (spec.metrics), the real
`ccltune worker` pods push their sync overhead to a real prometheus-pushgateway at the end of a
job far shorter than a scrape interval, and a real prometheus scrapes it and the controller's
/metrics. After the job has ended, every query of the Overview dashboard returns the job's
series; deleting the job deletes its Pushgateway groups and the controller's per-job gauge, so
Prometheus returns none of them after its next scrape (staleness). A Pushgateway that is down
at deletion is retried and logged once; one that never comes back is given up at the
controller's --pushgateway-cleanup-timeout."""

import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'sim'))
from simfixture import Simulator  # noqa: E402
from prom_fixture import Prometheus, Pushgateway, finite  # noqa: E402
from test_controller_common import SOURCE_DIR, ControllerEnv, free_port, test_failed, tiny_spec, wait_until  # noqa: E402

OVERVIEW = os.path.join(SOURCE_DIR, 'dashboards', 'ccltune-overview.json')
FAILED_LINE = 'deleting its Pushgateway groups failed'
GAVE_UP_LINE = 'giving up deleting its Pushgateway groups'


def metrics_spec(**over):
    """Two ranks in two pods. allGather has no recursive-doubling, so every allGather problem
    reports it skipped: the failures panel has a series too."""
    choices = ['ring', 'recursive-doubling']
    return tiny_spec(world=2, per_pod=1, collectives=[
        {'op': 'allReduce', 'dtypes': ['fp32'], 'reduceOp': 'sum', 'sizes': [1024], 'choices': choices},
        {'op': 'allGather', 'dtypes': ['fp32'], 'sizes': [1024], 'choices': choices}], **over)


def overview_queries(values):
    """(panel title, query) of every Overview target, Grafana's variables replaced."""
    with open(OVERVIEW) as f:
        dash = json.load(f)
    panels = []
    for p in dash['panels']:
        panels += [p] + p.get('panels', [])
    sub = lambda m: values[m.group(1) or m.group(2) or m.group(3)]  # noqa: E731
    return [(p['title'], re.sub(r'\$\{(\w+)\}|\[\[(\w+)\]\]|\$(\w+)', sub, t['expr']))
            for p in panels for t in p.get('targets', [])]


def wait_none_left(fn, timeout, what):
    """Polls fn() until it returns an empty list; fails naming `what` and what was left."""
    end, left = time.monotonic() + timeout, None
    while time.monotonic() < end:
        left = fn()
        if not left:
            return
        time.sleep(0.5)
    raise AssertionError('timed out after %ss waiting for %s; left: %r' % (timeout, what, left))


def is_job_series(labels, uid, name):
    """A series of this job: the workers' carry ccltune_job (its uid), the controller's its
    namespace and name."""
    return labels.get('ccltune_job') == uid or (labels.get('job') == name and labels.get('namespace') == 'default')


class Fixture(unittest.TestCase):
    def setUp(self):
        self.env = ControllerEnv(nodes=1)
        self.addCleanup(lambda: self.env.close(failed=test_failed(self)))
        self.pg = Pushgateway(self.env.dir)  # started by the tests that use it
        self.addCleanup(self.pg.stop)

    def run_job(self, name, ctl_args, **spec):
        self.env.install_crd()
        self.ctl = self.env.start_controller(extra_args=ctl_args)
        self.env.create_job(name, metrics_spec(**spec))
        st = self.env.wait_phase(name, ('Succeeded', 'Failed'), timeout=60)
        self.assertEqual(st['phase'], 'Succeeded', st)
        return self.env.job(name)['metadata']['uid'], st

    def failure_lines(self, text):
        return [line for line in self.ctl.logs().splitlines() if text in line]


class CrdDescriptionTest(unittest.TestCase):
    """Every field of the CRD has a description, and `kubectl explain` shows it."""

    def test_every_field_is_described_and_kubectl_explain_shows_it(self):
        with open(os.path.join(SOURCE_DIR, 'manifests', 'crds', 'ccltune.io_collectivetuningjobs.yaml')) as f:
            schema = yaml.safe_load(f)['spec']['versions'][0]['schema']['openAPIV3Schema']
        fields = {}

        def walk(node, path):
            fields[path] = node.get('description', '')
            for name, child in node.get('properties', {}).items():
                walk(child, path + '.' + name)
            if 'items' in node:
                walk(node['items'], path)  # kubectl explain names a list's items by the list
        walk(schema, 'ctj')
        self.assertEqual([p for p, d in fields.items() if not d], [], 'fields without a description')
        self.assertGreater(len(fields), 90)
        with Simulator() as sim:
            sim.kubectl('apply', '-f', os.path.join(SOURCE_DIR, 'manifests', 'crds'))
            sim.kubectl('wait', '--for', 'condition=established', '--timeout=30s',
                        'crd/collectivetuningjobs.ccltune.io')
            for path in ('ctj.spec.metrics', 'ctj.spec.metrics.pushgateway', 'ctj.spec.metrics.lingerSeconds',
                         'ctj.spec.worldSize', 'ctj.status.preSync.waitMs'):
                # The full name: a short name may not be in kubectl's discovery cache yet.
                out = ' '.join(sim.kubectl('explain', path.replace('ctj', 'collectivetuningjobs', 1)).stdout.split())
                self.assertIn(' '.join(fields[path].split()), out, path)


class KustomizeComponentTest(unittest.TestCase):
    """manifests/pushgateway, a kustomize Component: off in the base; added, it brings a
    Pushgateway that runs with least privilege and points the controller at its Service; the
    API server accepts the whole rendering."""

    def render(self, workdir, components):
        manifests = os.path.relpath(os.path.join(SOURCE_DIR, 'manifests'), workdir)
        with open(os.path.join(workdir, 'kustomization.yaml'), 'w') as f:
            f.write('resources: [%s]\ncomponents: [%s]\n' % (manifests, ', '.join(
                os.path.join(manifests, c) for c in components)))
        out = subprocess.run(['kubectl', 'kustomize', workdir], capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        return out.stdout, {(d['kind'], d['metadata']['name']): d for d in yaml.safe_load_all(out.stdout) if d}

    def test_component_adds_a_least_privilege_pushgateway_the_controller_pushes_to(self):
        with tempfile.TemporaryDirectory() as workdir:
            _, base = self.render(workdir, [])
            text, objs = self.render(workdir, ['pushgateway'])
        self.assertNotIn(('Deployment', 'ccltune-pushgateway'), base)
        args = objs[('Deployment', 'ccltune-controller')]['spec']['template']['spec']['containers'][0]['args']
        urls = [a.split('=', 1)[1] for a in args if a.startswith('--pushgateway-url=')]
        self.assertEqual(len(urls), 1, args)
        svc = objs[('Service', 'ccltune-pushgateway')]
        self.assertEqual(urls[0], 'http://%s.%s:%d' % (svc['metadata']['name'], svc['metadata']['namespace'],
                                                       svc['spec']['ports'][0]['port']))
        pod = objs[('Deployment', 'ccltune-pushgateway')]['spec']['template']['spec']
        self.assertIs(pod['automountServiceAccountToken'], False)
        self.assertIs(pod['securityContext']['runAsNonRoot'], True)
        c = pod['containers'][0]
        self.assertIs(c['securityContext']['readOnlyRootFilesystem'], True)
        self.assertIs(c['securityContext']['allowPrivilegeEscalation'], False)
        self.assertEqual(c['securityContext']['capabilities']['drop'], ['ALL'])
        self.assertIn('memory', c['resources']['limits'])
        with Simulator() as sim:
            out = sim.kubectl('apply', '-f', '-', input=text).stdout
        self.assertIn('deployment.apps/ccltune-pushgateway created', out)


class MetricsReachPrometheusTest(Fixture):
    def test_job_series_on_every_overview_panel_then_gone_with_the_job(self):
        env, pg = self.env, self.pg.start()
        uid, st = self.run_job('metrics', ['--pushgateway-url', pg.url], metrics={'lingerSeconds': 1})
        # What the pods got: the controller's Pushgateway and the job's own linger.
        pod = env.pods('metrics')[0]['spec']['containers'][0]
        self.assertIn({'name': 'CCLTUNE_PUSHGATEWAY', 'value': pg.url}, pod['env'])
        self.assertEqual(pod['args'], ['--metrics-linger', '1'])
        self.assertEqual(sorted(g['rank'] for g in pg.job_groups(uid)), ['0', '1'])
        # Prometheus starts only now: the job ended long before its first scrape.
        prom = Prometheus(env.dir, {'pushgateway': pg.port, 'ccltune-controller': self.ctl.port}).start()
        self.addCleanup(prom.stop)
        values = {'namespace': '.*', 'job': uid, 'fingerprint': st['fingerprint'], 'datasource': 'prometheus',
                  '__rate_interval': '1m', '__interval': '1s'}
        queries = overview_queries(values)
        self.assertIn('ccltune_job_presync_wait_seconds', ' '.join(q for _, q in queries))

        def panels_without_the_job():
            missing = []
            for title, q in queries:
                series = finite(prom.query(q))
                labelled = [s for s, _ in series if 'ccltune_job' in s or 'job' in s]
                if not series or (labelled and not any(is_job_series(s, uid, 'metrics') for s in labelled)):
                    missing.append(title)
            return missing
        wait_none_left(panels_without_the_job, 30, 'every Overview query to return the job')
        print('%d Overview queries return job %s' % (len(queries), uid))
        # Deleted: its groups and the controller's gauge go, and so do its series in Prometheus.
        env.kubectl('delete', 'ctj', 'metrics', '--wait=false')
        wait_until(lambda: env.job('metrics') is None, 30, 'job deleted')
        self.assertEqual(pg.job_groups(uid), [])
        self.assertNotIn('job="metrics"', self.ctl.get('/metrics')[1])

        def job_series_left():
            left = [title for title, q in queries if any(is_job_series(s, uid, 'metrics') for s, _ in prom.query(q))]
            return left + [q for q in ('{ccltune_job="%s"}' % uid, 'ccltune_job_presync_wait_seconds{job="metrics"}')
                           if prom.query(q)]
        wait_none_left(job_series_left, 15, 'Prometheus to return none of the job\'s series')
        self.assertEqual(self.failure_lines(FAILED_LINE), [])


class PushgatewayDownAtDeletionTest(Fixture):
    def test_delete_is_retried_logged_once_and_done_when_it_is_back(self):
        env, pg = self.env, self.pg.start()
        uid, _ = self.run_job('retried', ['--pushgateway-url', pg.url])
        self.assertEqual(len(pg.job_groups(uid)), 2)
        pg.stop()  # writes its groups to its persistence file
        env.kubectl('delete', 'ctj', 'retried', '--wait=false')
        wait_until(lambda: self.failure_lines(FAILED_LINE), 15, 'the failed delete logged')
        time.sleep(3)  # retries at 1 s and 2 s meanwhile
        self.assertIsNotNone(env.job('retried'), 'deleted while its groups were unreachable')
        pg.start()
        self.assertEqual(len(pg.job_groups(uid)), 2, 'groups restored from the persistence file')
        wait_until(lambda: env.job('retried') is None, 40, 'job deleted once the Pushgateway is back')
        self.assertEqual(pg.job_groups(uid), [])
        self.assertEqual(len(self.failure_lines(FAILED_LINE)), 1, self.ctl.logs())
        self.assertEqual(len(self.failure_lines('deleted its 2 Pushgateway group(s)')), 1)


class PushgatewayGoneTest(Fixture):
    def test_deletion_goes_on_after_the_cleanup_timeout(self):
        env = self.env
        gone = 'http://127.0.0.1:%d' % free_port()
        self.run_job('given-up', ['--pushgateway-url', gone, '--pushgateway-cleanup-timeout', '3'])
        env.kubectl('delete', 'ctj', 'given-up', '--wait=false')
        t0 = time.monotonic()
        wait_until(lambda: self.failure_lines(FAILED_LINE), 15, 'the failed delete logged')
        self.assertIsNotNone(env.job('given-up'), 'deleted before the cleanup timeout')
        wait_until(lambda: env.job('given-up') is None, 30, 'job deleted after the cleanup timeout')
        self.assertGreater(time.monotonic() - t0, 1.0)
        self.assertEqual(len(self.failure_lines(FAILED_LINE)), 1, self.ctl.logs())
        self.assertEqual(len(self.failure_lines(GAVE_UP_LINE)), 1, self.ctl.logs())


if __name__ == '__main__':
    unittest.main()

"""Shared fixture of the pod-injection tests and benchmark (no tests here): the API-server
simulator (no node agent: admission happens at create, before any node), a real redis-server,
and a real ccltune-controller serving the webhook over HTTPS, with the repository's own
MutatingWebhookConfiguration (manifests/webhook/) registered, pointed at the controller by url.

Env: CCLTUNE_CONTROLLER_BIN, CCLTUNE_SOURCE_DIR (ctest sets both).
"""

import base64
import copy
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, 'sim'))
from simfixture import Simulator  # noqa: E402
from test_controller_common import Redis, free_port, wait_until  # noqa: E402

SOURCE_DIR = os.environ.get('CCLTUNE_SOURCE_DIR', os.path.abspath(os.path.join(HERE, '..', '..')))
CONTROLLER_BIN = os.environ.get('CCLTUNE_CONTROLLER_BIN', '')
WEBHOOK_YAML = os.path.join(SOURCE_DIR, 'manifests', 'webhook', 'mutatingwebhookconfiguration.yaml')
SYSTEM_NS, OPTED_NS, PLAIN_NS = 'ccltune-system', 'team-a', 'team-b'
HOOKS = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations'


def webhook_config(url, ca_bundle='', **over):
    """manifests/webhook's configuration, its clientConfig a url (the simulator cannot reach a
    Service), with `over` merged into its webhook."""
    with open(WEBHOOK_YAML) as f:
        cfg = yaml.safe_load(f)
    hook = cfg['webhooks'][0]
    hook['clientConfig'] = {'url': url}
    if ca_bundle:
        hook['clientConfig']['caBundle'] = ca_bundle
    hook.update(over)
    return cfg


def pod(name, inject=None, env=None, labels=None):
    lb = dict(labels or {}, app='trainer')
    if inject is not None:
        lb['ccltune.io/inject'] = inject
    c = {'name': 'main', 'image': 'pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime',
         'command': ['python', 'train.py']}
    if env:
        c['env'] = env
    return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': name, 'labels': lb},
            'spec': {'containers': [c]}}


def env_of(p, name, container=0):
    for e in p['spec']['containers'][container].get('env') or []:
        if e['name'] == name:
            return e.get('value', e.get('valueFrom'))
    return None


class InjectEnv:
    """bind_host: the controller's webhook and API listeners bind that address only
    (--webhook-bind-address, --metrics-bind-address, with the same ports as the port flags
    beside them); None: every interface (the port flags alone)."""

    def __init__(self, controller_args=(), register=True, bind_host=None):
        if not CONTROLLER_BIN or not os.access(CONTROLLER_BIN, os.X_OK):
            raise RuntimeError('CCLTUNE_CONTROLLER_BIN is not an executable: %r' % CONTROLLER_BIN)
        self.dir = tempfile.mkdtemp(prefix='ccltune-injecttest-')
        self.redis = Redis(self.dir)
        self.sim = Simulator().start()
        for ns, labels in ((SYSTEM_NS, {}), (OPTED_NS, {'ccltune.io/inject-enabled': 'true'}), (PLAIN_NS, {})):
            self.api('POST', '/api/v1/namespaces', {'apiVersion': 'v1', 'kind': 'Namespace',
                                                    'metadata': {'name': ns, 'labels': labels}})
        self.port, self.metrics_port, self.bind_host = free_port(), free_port(), bind_host
        self.url = 'https://127.0.0.1:%d/mutate-pods' % self.port
        if register:   # without caBundle: the controller fills it in
            self.check(self.api('POST', HOOKS, webhook_config(self.url)), 201)
        self.controller_args = list(controller_args)
        self.proc, self.log = None, None
        self.log_path = os.path.join(self.dir, 'controller.log')
        try:
            self.start_controller()
        except BaseException:
            self.close(failed=True)   # the test's cleanup is not registered yet
            raise

    def start_controller(self):
        listeners = ['--metrics-port', str(self.metrics_port), '--webhook-port', str(self.port)]
        if self.bind_host is not None:   # beside the port flags, as an overlay adds them
            listeners += ['--metrics-bind-address', '%s:%d' % (self.bind_host, self.metrics_port),
                          '--webhook-bind-address', '%s:%d' % (self.bind_host, self.port)]
        args = [CONTROLLER_BIN, '--kubeconfig', self.sim.kubeconfig, '--redis-url', self.redis.url,
                '--health-probe-bind-address', '127.0.0.1:%d' % free_port(),
                '--worker-image', 'ghcr.io/ccltune/ccltune:0.1.0-cuda',
                '--webhook-namespace', SYSTEM_NS, '--webhook-hosts', '127.0.0.1,localhost',
                '--inject-redis-url', 'redis://ccltune-redis.ccltune-system:6379/0'] + listeners + self.controller_args
        self.log = open(self.log_path, 'a')
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        wait_until(lambda: self.ca_bundle_current() or self.proc.poll() is not None, 30,
                   'the controller to write its certificate and the caBundle')
        if self.proc.poll() is not None:
            raise AssertionError('the controller exited (%d): %s' % (self.proc.returncode, self.log_tail()))

    def log_tail(self):
        self.log.flush()
        with open(self.log_path, errors='replace') as f:
            return f.read()[-3000:]

    def stop_controller(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=20)
        if self.log:
            self.log.close()

    def secret(self):
        code, s = self.api('GET', '/api/v1/namespaces/%s/secrets/ccltune-webhook-tls' % SYSTEM_NS)
        return s if code == 200 else None

    def ca_bundle(self):
        code, cfg = self.api('GET', HOOKS + '/ccltune-inject')
        return cfg['webhooks'][0]['clientConfig'].get('caBundle', '') if code == 200 else ''

    def ca_bundle_current(self):
        s = self.secret()
        return s is not None and self.ca_bundle() == s['data']['ca.crt']

    def close(self, failed=False):
        if failed and os.path.exists(self.log_path):
            with open(self.log_path, errors='replace') as f:
                sys.stderr.write('--- controller log (tail) ---\n%s\n' % f.read()[-6000:])
        self.stop_controller()
        self.sim.stop()
        self.redis.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def api(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.sim.url + path, data=data, method=method,
                                     headers={'Content-Type': 'application/json'})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read() or b'{}')
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b'{}')

    @staticmethod
    def check(answer, code):
        if answer[0] != code:
            raise AssertionError('expected %d, got %d: %s' % (code, answer[0], answer[1]))
        return answer[1]

    def create(self, p, ns=OPTED_NS):
        return self.check(self.api('POST', '/api/v1/namespaces/%s/pods' % ns, p), 201)

    def admission_records(self):
        return self.sim.control('GET', '/_sim/state').get('admission', [])


def cert_pems(b64):
    text = base64.b64decode(b64).decode()
    return [c for c in text.split('-----END CERTIFICATE-----') if 'BEGIN' in c]

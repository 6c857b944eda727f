"""Shared fixture of the controller tests (no tests here): the API-server simulator with its
node agent, a real redis-server on a free port, and real ccltune-controller processes.

Env: CCLTUNE_CONTROLLER_BIN (ccltune-controller), CCLTUNE_BIN (the worker binary the node
agent runs for `ccltune` commands), CCLTUNE_SOURCE_DIR (repo root). ctest sets all three.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, 'sim'))

from simfixture import Simulator  # noqa: E402

SOURCE_DIR = os.environ.get('CCLTUNE_SOURCE_DIR', os.path.abspath(os.path.join(HERE, '..', '..')))
CONTROLLER_BIN = os.environ.get('CCLTUNE_CONTROLLER_BIN', '')
WORKER_BIN = os.environ.get('CCLTUNE_BIN', '')
CRD_DIR = os.path.join(SOURCE_DIR, 'manifests', 'crds')
JOBS = '/apis/ccltune.io/v1alpha1/namespaces/default/collectivetuningjobs'
PODS = '/api/v1/namespaces/default/pods'
FINAL = ('Succeeded', 'Failed')


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def wait_until(fn, timeout, what, interval=0.2):
    """Polls fn() until it returns a truthy value; fails naming `what` after `timeout` s."""
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        last = fn()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError('timed out after %ss waiting for %s (last: %r)' % (timeout, what, last))


def test_failed(tc):
    """True when the running test (in tearDown) has failed: then logs are worth printing."""
    return not getattr(getattr(tc, '_outcome', None), 'success', False)


class Redis:
    """A private redis-server on a free loopback port (no persistence)."""

    def __init__(self, workdir, password=None):
        self.port = free_port()
        self.password = password
        auth = ['--requirepass', password] if password else []
        self.proc = subprocess.Popen(['redis-server', '--port', str(self.port), '--bind', '127.0.0.1',
                                      '--save', '', '--appendonly', 'no', '--dir', workdir] + auth,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(lambda: self.cli('PING') == 'PONG', 10, 'redis-server to answer PING')
        self.url = 'redis://127.0.0.1:%d/0' % self.port

    def cli(self, *args):
        auth = ['-a', self.password, '--no-auth-warning'] if self.password else []
        r = subprocess.run(['redis-cli', '-p', str(self.port)] + auth + list(args), capture_output=True, text=True)
        return r.stdout.strip()

    def keys(self, pattern):
        out = self.cli('--scan', '--pattern', pattern)
        return [k for k in out.splitlines() if k]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


class Controller:
    """One ccltune-controller process against the simulator."""

    def __init__(self, env, name, extra_args=(), wait_ready=True):
        self.env = env
        self.name = name
        self.port = free_port()        # /metrics and the results API
        self.probe_port = free_port()  # /healthz and /readyz
        self.log_path = os.path.join(env.dir, 'controller-%s.log' % name)
        args = [CONTROLLER_BIN, '--kubeconfig', env.sim.kubeconfig, '--redis-url', env.redis.url,
                '--metrics-port', str(self.port),
                '--health-probe-bind-address', '127.0.0.1:%d' % self.probe_port,
                '--worker-image', 'ccltune:test', '--identity', name] + list(extra_args)
        self.log = open(self.log_path, 'w')
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        if wait_ready:
            self.wait_ready()

    def wait_ready(self):
        wait_until(lambda: self.probe('/readyz')[0] == 200, 30, 'controller %s /readyz' % self.name)

    def probe(self, path):
        """(code, body) of /healthz or /readyz on the probe port."""
        return self.get(path, self.probe_port)

    def get(self, path, port=None):
        """(code, body) of a GET on the API port (or `port`); code 0 when none came."""
        try:
            with urllib.request.urlopen('http://127.0.0.1:%d%s' % (port or self.port, path), timeout=10) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()
        except OSError as e:
            return 0, str(e)

    def metric(self, name, labels=''):
        """Sum of the samples of `name` whose label text contains `labels`."""
        total = 0.0
        for line in self.get('/metrics')[1].splitlines():
            m = re.match(r'^%s(\{[^}]*\})? (\S+)$' % re.escape(name), line)
            if m and labels in (m.group(1) or ''):
                total += float(m.group(2))
        return total

    def peak_rss_kib(self):
        with open('/proc/%d/status' % self.proc.pid) as f:
            for line in f:
                if line.startswith('VmHWM:'):
                    return int(line.split()[1])
        return 0

    def logs(self):
        with open(self.log_path, errors='replace') as f:
            return f.read()

    def kill(self, sig=signal.SIGKILL):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=20)
        self.log.close()


class ControllerEnv:
    """Simulator (+node agent running the real worker) + Redis + controllers."""

    def __init__(self, nodes=2, sim_args=(), token=None):
        if not CONTROLLER_BIN or not os.access(CONTROLLER_BIN, os.X_OK):
            raise RuntimeError('CCLTUNE_CONTROLLER_BIN is not an executable: %r' % CONTROLLER_BIN)
        if not WORKER_BIN or not os.access(WORKER_BIN, os.X_OK):
            raise RuntimeError('CCLTUNE_BIN is not an executable: %r' % WORKER_BIN)
        self.dir = tempfile.mkdtemp(prefix='ccltune-ctrltest-')
        self.redis = Redis(self.dir)
        self.sim = Simulator(node_agent=True, nodes=nodes,
                             extra_args=['--ccltune-bin', WORKER_BIN, '--node-cpu', '1000'] + list(sim_args),
                             token=token).start()
        self.controllers = []

    def start_controller(self, name='c0', extra_args=(), wait_ready=True):
        c = Controller(self, name, extra_args, wait_ready)
        self.controllers.append(c)
        return c

    def close(self, failed=False):
        for c in self.controllers:
            if failed:
                sys.stderr.write('--- controller %s log (tail) ---\n%s\n' % (c.name, c.logs()[-6000:]))
            c.kill(signal.SIGTERM)
        self.sim.stop()
        self.redis.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    # --- API helpers (plain HTTP to the simulator; kubectl where the test is about kubectl) ---
    def api(self, method, path, body=None, content_type='application/json'):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.sim.url + path, data=data, method=method,
                                     headers={'Content-Type': content_type})
        try:
            with urllib.request.urlopen(req, timeout=20) as r:
                return r.status, json.loads(r.read() or b'{}')
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b'{}')

    def kubectl(self, *args, **kw):
        return self.sim.kubectl(*args, **kw)

    def install_crd(self, path=None):
        self.kubectl('apply', '-f', path or CRD_DIR)

    def create_job(self, name, spec):
        code, body = self.api('POST', JOBS, {'apiVersion': 'ccltune.io/v1alpha1', 'kind': 'CollectiveTuningJob',
                                             'metadata': {'name': name}, 'spec': spec})
        if code != 201:
            raise AssertionError('create %s: %d %s' % (name, code, body))
        return body

    def job(self, name):
        code, body = self.api('GET', JOBS + '/' + name)
        return body if code == 200 else None

    def status(self, name):
        j = self.job(name)
        return (j or {}).get('status', {})

    def phase(self, name):
        return self.status(name).get('phase')

    def condition(self, name, ctype):
        for c in self.status(name).get('conditions', []):
            if c['type'] == ctype:
                return c
        return None

    def wait_phase(self, name, phases, timeout=60):
        phases = (phases,) if isinstance(phases, str) else phases
        return wait_until(lambda: self.phase(name) in phases and self.status(name), timeout,
                          'job %s phase in %s' % (name, phases))

    def pods(self, job=None):
        sel = '?labelSelector=' + urllib.request.quote('ccltune.io/job' + ('=' + job if job else ''))
        return self.api('GET', PODS + sel)[1].get('items', [])


def tiny_spec(world=1, per_pod=1, **over):
    """A plan small enough that a host-backend worker finishes in about a second."""
    spec = {'worldSize': world, 'gpusPerPod': per_pod, 'backend': 'host',
            'collectives': [{'op': 'allReduce', 'dtypes': ['fp32'], 'reduceOp': 'sum', 'sizes': [1024]}],
            'benchmark': {'warmupIters': 1, 'iters': 2, 'rounds': 1, 'preSyncWindowSeconds': 5,
                          'rendezvousTimeoutSeconds': 30, 'choiceTimeoutSeconds': 10},
            'backoffLimit': 0, 'activeDeadlineSeconds': 120}
    spec.update(over)
    return spec

"""Start/stop the API-server simulator from Python tests.

    from simfixture import Simulator
    with Simulator(node_agent=True, nodes=2) as sim:
        sim.kubeconfig, sim.url, sim.port, sim.kubectl('get', 'pods'), sim.control('POST', '/_sim/compact')
"""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = '/usr/bin/python3' if os.path.exists('/usr/bin/python3') else 'python3'


class Simulator:
    def __init__(self, node_agent=False, nodes=1, extra_args=(), token=None, env=None):
        self.node_agent = node_agent
        self.nodes = nodes
        self.extra_args = list(extra_args)
        self.token = token
        self.env = env
        self.proc = None

    def start(self):
        self.dir = tempfile.mkdtemp(prefix='ccltune-simtest-')
        self.kubeconfig = os.path.join(self.dir, 'kubeconfig')
        port_file = os.path.join(self.dir, 'port')
        args = [PYTHON, os.path.join(HERE, 'apiserver.py'), '--port', '0', '--port-file', port_file,
                '--kubeconfig-out', self.kubeconfig, '--pod-dir', os.path.join(self.dir, 'pods')] + self.extra_args
        if self.token:
            args += ['--token', self.token]
        if self.node_agent:
            args += ['--node-agent', '--nodes', str(self.nodes)]
        self.stderr = open(os.path.join(self.dir, 'stderr'), 'w')
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.stderr, text=True, env=self.env)
        line = self.proc.stdout.readline()
        if line.strip() != 'ready':
            self.stop()
            raise RuntimeError('simulator did not start: %r' % line)
        with open(port_file) as f:
            self.port = int(f.read())
        self.url = '%s://127.0.0.1:%d' % ('https' if '--https' in self.extra_args else 'http', self.port)
        return self

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc and self.proc.stdout:
            self.proc.stdout.close()
        self.stderr.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *a):
        self.stop()

    def control(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={'Content-Type': 'application/json'})
        ctx = None
        if self.url.startswith('https'):
            import ssl
            ctx = ssl._create_unverified_context()
        with urllib.request.urlopen(req, timeout=10, context=ctx) as r:
            return json.loads(r.read() or b'{}')

    def kubectl(self, *args, check=True, input=None, timeout=60):
        env = dict(os.environ, KUBECACHEDIR=os.path.join(self.dir, 'kubectl-cache'))   # no stale ~/.kube/cache
        r = subprocess.run(['kubectl', '--kubeconfig', self.kubeconfig] + list(args), capture_output=True, text=True,
                           input=input, timeout=timeout, env=env)
        if check and r.returncode != 0:
            raise AssertionError('kubectl %s failed (%d): %s%s' % (' '.join(args), r.returncode, r.stdout, r.stderr))
        return r

    def pid_of(self, name, namespace='default'):
        for p in self.control('GET', '/_sim/state').get('processes', []):
            if p['name'] == name and p['namespace'] == namespace and p['running']:
                return p['pid']
        return None

    def wait_for(self, fn, timeout=20, interval=0.1):
        end = time.monotonic() + timeout
        while True:
            v = fn()
            if v:
                return v
            if time.monotonic() > end:
                raise AssertionError('condition not met within %ss' % timeout)
            time.sleep(interval)

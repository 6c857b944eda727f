"""The pod-injection webhook (issue 46) through the API-server simulator's admission, as a
cluster calls it: the real ccltune-controller serves it over HTTPS with the certificate it made
and put in the caBundle of manifests/webhook's MutatingWebhookConfiguration.

Shown: each variant on a labelled pod; an unlabelled pod and a pod in a namespace that did not
opt in untouched; reinvocation after a later webhook adds a container adds nothing twice; the
user's own LD_PRELOAD and NCCL_TUNER_PLUGIN kept; the webhook down: the pod still created, the
failure recorded, the pod not annotated, as the manifests' comments say; a pod's own init
container, volume or mount under ccltune's names or path left uninjected, its annotation saying
why; certificate rotation while pods are created (every pod injected, the renewed certificate
presented once the caBundle holds its CA); the patched specs pass `kubectl apply
--dry-run=client`; bad requests (malformed, fields of the wrong JSON type, another kind, huge,
deep, slow) get a 400 naming the field, 413, 408 or an allow-without-change, and the controller
stays up; --webhook-bind-address and --metrics-bind-address narrow the listeners to one address
(every interface without them).
"""

import base64
import http.server
import json
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, 'sim'))
from apiserver import make_cert  # noqa: E402
from inject_fixture import (CONTROLLER_BIN, HOOKS, OPTED_NS, PLAIN_NS, SOURCE_DIR, InjectEnv,  # noqa: E402
                            cert_pems, env_of, pod, webhook_config)
from test_controller_common import free_port, test_failed, wait_until  # noqa: E402

LIB = '/opt/ccltune/lib/'
# Loopback too, but another address than 127.0.0.1: a listener bound to 127.0.0.1 refuses it.
OTHER_LOOPBACK = '127.0.0.2'


def connects(host, port):
    try:
        with socket.create_connection((host, port), timeout=5):
            return True
    except ConnectionRefusedError:
        return False


def comment_text(path):
    """The comments of a YAML file, joined into one text."""
    with open(path) as f:
        return ' '.join(line.split('#', 1)[1].strip() for line in f if line.lstrip().startswith('#'))


class SidecarWebhook:
    """Another mutating webhook (its configuration sorts after ccltune's): adds a container."""

    def __init__(self, workdir):
        key, crt = make_cert(workdir)
        with open(crt, 'rb') as f:
            self.ca = base64.b64encode(f.read()).decode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                review = json.loads(self.rfile.read(int(self.headers['Content-Length'])))
                ops = [{'op': 'add', 'path': '/spec/containers/-', 'value': {'name': 'sidecar', 'image': 'envoy'}}]
                have = [c['name'] for c in review['request']['object']['spec']['containers']]
                resp = {'uid': review['request']['uid'], 'allowed': True}
                if 'sidecar' not in have:
                    resp.update(patchType='JSONPatch', patch=base64.b64encode(json.dumps(ops).encode()).decode())
                body = json.dumps({'apiVersion': 'admission.k8s.io/v1', 'kind': 'AdmissionReview',
                                   'response': resp}).encode()
                self.send_response(200)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(crt, key)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.url = 'https://127.0.0.1:%d/' % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()


class InjectTest(unittest.TestCase):
    def setUp(self):
        self.env = InjectEnv()
        self.addCleanup(lambda: self.env.close(failed=test_failed(self)))

    def test_each_variant_on_a_labelled_pod_and_the_specs_pass_kubectl_dry_run(self):
        made = {}
        for value in ('plugin', 'preload', 'telemetry', 'plugin.preload.telemetry'):
            p = self.env.create(pod('job-' + value.replace('.', '-'), inject=value))
            made[value] = p
            self.assertEqual(p['metadata']['annotations']['ccltune.io/injected'], value.replace('.', ','))
            self.assertEqual(env_of(p, 'CCLTUNE_REDIS_URL'), 'redis://ccltune-redis.ccltune-system:6379/0')
            self.assertEqual(env_of(p, 'CCLTUNE_NODE_NAME'), {'fieldRef': {'apiVersion': 'v1', 'fieldPath': 'spec.nodeName'}})
            self.assertEqual(env_of(p, 'CCLTUNE_REDIS_PASSWORD')['secretKeyRef']['optional'], True)
        self.assertEqual(env_of(made['plugin'], 'NCCL_TUNER_PLUGIN'), LIB + 'libnccl-tuner-ccltune.so')
        self.assertIsNone(env_of(made['plugin'], 'LD_PRELOAD'))
        self.assertEqual(env_of(made['preload'], 'LD_PRELOAD'), LIB + 'libccltune-nccl.so')
        self.assertEqual(env_of(made['preload'], 'TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK'), '1')
        self.assertIsNone(env_of(made['plugin'], 'TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK'))
        self.assertEqual(made['preload']['spec']['containers'][0]['volumeMounts'],
                         [{'name': 'ccltune-lib', 'mountPath': '/opt/ccltune/lib', 'readOnly': True}])
        self.assertEqual(made['preload']['spec']['initContainers'][0]['command'],
                         ['cp', '-L', '/usr/local/lib/libccltune-nccl.so', LIB])
        tel = made['telemetry']
        self.assertEqual(tel['spec']['initContainers'][0]['command'],
                         ['cp', '-L', '/usr/local/lib/libnccl-profiler-ccltune.so',
                          '/usr/local/lib/libccltune-telemetry.so.1', LIB])
        self.assertEqual(tel['metadata']['labels']['ccltune.io/metrics'], 'true')
        self.assertEqual(env_of(tel, 'CCLTUNE_REDIS_USERNAME'), 'ccltune-telemetry')
        self.assertEqual(env_of(tel, 'CCLTUNE_TELEMETRY'), 'on')
        self.assertEqual(env_of(tel, 'NCCL_PROFILER_PLUGIN'), LIB + 'libnccl-profiler-ccltune.so')
        self.assertEqual(env_of(tel, 'CCLTUNE_POD_NAME'), {'fieldRef': {'apiVersion': 'v1', 'fieldPath': 'metadata.name'}})
        self.assertEqual(env_of(tel, 'CCLTUNE_POD_NAMESPACE'),
                         {'fieldRef': {'apiVersion': 'v1', 'fieldPath': 'metadata.namespace'}})
        self.assertEqual(env_of(tel, 'CCLTUNE_METRICS_PORT'), '9464')
        self.assertEqual(tel['spec']['containers'][0]['ports'], [{'name': 'ccltune-metrics', 'containerPort': 9464}])
        for value in ('plugin', 'preload'):
            for name in ('CCLTUNE_TELEMETRY', 'NCCL_PROFILER_PLUGIN', 'CCLTUNE_POD_NAME', 'CCLTUNE_POD_NAMESPACE'):
                self.assertIsNone(env_of(made[value], name), (value, name))
        self.assertEqual(env_of(made['plugin'], 'CCLTUNE_REDIS_USERNAME'), 'ccltune-reader')
        all3 = made['plugin.preload.telemetry']['spec']['initContainers'][0]['command']
        self.assertEqual(all3, ['cp', '-L'] + ['/usr/local/lib/' + lib for lib in (
            'libnccl-tuner-ccltune.so', 'libccltune-nccl.so', 'libnccl-profiler-ccltune.so',
            'libccltune-telemetry.so.1')] + [LIB])
        # The patched specs, as stored, are valid manifests for kubectl.
        path = os.path.join(self.env.dir, 'patched.json')
        items = []
        for p in made.values():
            md = p['metadata']
            items.append({'apiVersion': 'v1', 'kind': 'Pod', 'spec': p['spec'],
                          'metadata': {'name': md['name'] + '-copy', 'namespace': md['namespace'],
                                       'labels': md['labels'], 'annotations': md['annotations']}})
        with open(path, 'w') as f:
            json.dump({'apiVersion': 'v1', 'kind': 'List', 'items': items}, f)
        r = self.env.sim.kubectl('apply', '--dry-run=client', '-f', path)
        self.assertEqual(r.stdout.count('created (dry run)'), 4, r.stdout)

    def test_unlabelled_pod_and_a_namespace_that_did_not_opt_in_are_untouched(self):
        for ns, p in ((OPTED_NS, pod('plain')), (PLAIN_NS, pod('labelled', inject='preload'))):
            got = self.env.create(p, ns=ns)
            self.assertNotIn('initContainers', got['spec'])
            self.assertNotIn('annotations', got['metadata'])
            self.assertEqual(got['spec']['containers'][0].get('env'), None)
        self.assertEqual([r for r in self.env.admission_records() if 'ms' in r], [])
        # A label value cannot hold a comma: the API server refuses it before any webhook.
        code, body = self.env.api('POST', '/api/v1/namespaces/%s/pods' % OPTED_NS, pod('comma', inject='plugin,preload'))
        self.assertEqual(code, 422, body)

    def test_reinvocation_after_another_webhook_adds_nothing_twice(self):
        side = SidecarWebhook(self.env.dir)
        self.addCleanup(side.stop)
        cfg = webhook_config(side.url, side.ca, name='sidecar.example.com', reinvocationPolicy='Never')
        cfg['metadata']['name'] = 'zz-sidecar-injector'
        self.env.check(self.env.api('POST', HOOKS, cfg), 201)
        p = self.env.create(pod('with-sidecar', inject='plugin.preload'))
        names = [c['name'] for c in p['spec']['containers']]
        self.assertEqual(names, ['main', 'sidecar'])
        self.assertEqual(len(p['spec']['initContainers']), 1)
        self.assertEqual(len(p['spec']['volumes']), 1)
        for i in (0, 1):
            envs = [e['name'] for e in p['spec']['containers'][i]['env']]
            self.assertEqual(len(envs), len(set(envs)), envs)
            self.assertEqual(env_of(p, 'LD_PRELOAD', i), LIB + 'libccltune-nccl.so')
        rounds = [r['round'] for r in self.env.admission_records() if r.get('webhook') == 'inject.ccltune.io']
        self.assertEqual(rounds, [0, 1])

    def test_users_own_ld_preload_and_tuner_plugin_are_kept(self):
        env = [{'name': 'LD_PRELOAD', 'value': '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2'},
               {'name': 'NCCL_TUNER_PLUGIN', 'value': '/opt/mine/libtuner.so'}]
        p = self.env.create(pod('own-env', inject='plugin.preload', env=env))
        self.assertEqual(env_of(p, 'LD_PRELOAD'), '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2:' + LIB + 'libccltune-nccl.so')
        self.assertEqual(env_of(p, 'NCCL_TUNER_PLUGIN'), '/opt/mine/libtuner.so')
        self.assertIn('keeps its own NCCL_TUNER_PLUGIN', p['metadata']['annotations']['ccltune.io/injected'])

    def test_a_pods_own_parts_under_ccltunes_names_are_not_merged_and_the_annotation_says_why(self):
        own_init = pod('own-init', inject='preload')
        own_init['spec']['initContainers'] = [{'name': 'ccltune-inject', 'image': 'busybox',
                                               'command': ['sh', '-c', 'echo hi']}]
        own_volume = pod('own-volume', inject='plugin')
        own_volume['spec']['volumes'] = [{'name': 'ccltune-lib', 'configMap': {'name': 'app-config'}}]
        own_volume['spec']['containers'][0]['volumeMounts'] = [{'name': 'ccltune-lib', 'mountPath': '/etc/app'}]
        own_path = pod('own-path', inject='preload')
        own_path['spec']['volumes'] = [{'name': 'cache', 'emptyDir': {}}]
        own_path['spec']['containers'][0]['volumeMounts'] = [{'name': 'cache', 'mountPath': '/opt/ccltune/lib'}]
        for p, why in ((own_init, "none: init container ccltune-inject is the pod's own, not ccltune's: "
                                  "rename it, ccltune needs that name"),
                       (own_volume, "none: volume ccltune-lib is the pod's own (configMap), not ccltune's: "
                                    "rename it, ccltune needs that name"),
                       (own_path, "none: container main mounts volume cache at /opt/ccltune/lib: move it, "
                                  "ccltune needs that path")):
            got = self.env.create(p)
            self.assertEqual(got['metadata']['annotations']['ccltune.io/injected'], why)
            spec, asked = got['spec'], p['spec']
            self.assertIsNone(spec['containers'][0].get('env'), p['metadata']['name'])
            self.assertEqual([c['name'] for c in spec.get('initContainers') or []],
                             [c['name'] for c in asked.get('initContainers') or []])
            self.assertEqual([v['name'] for v in spec.get('volumes') or []],
                             [v['name'] for v in asked.get('volumes') or []])
            self.assertEqual(spec['containers'][0].get('volumeMounts'), asked['containers'][0].get('volumeMounts'))

    def test_listeners_bind_every_interface_by_default(self):
        for port in (self.env.port, self.env.metrics_port):
            self.assertTrue(connects(OTHER_LOOPBACK, port), port)

    def test_webhook_down_the_pod_is_created_and_the_reason_recorded(self):
        self.env.stop_controller()
        t0 = time.monotonic()
        p = self.env.create(pod('while-down', inject='preload'))
        self.assertLess(time.monotonic() - t0, 5)
        self.assertNotIn('initContainers', p['spec'])
        # No annotation either: nothing of ccltune's ran. The manifests' comments say so.
        self.assertNotIn('annotations', p['metadata'])
        for path in (('manifests', 'webhook', 'mutatingwebhookconfiguration.yaml'),
                     ('charts', 'ccltune', 'values.yaml')):
            said = comment_text(os.path.join(SOURCE_DIR, *path))
            self.assertNotRegex(said, r'annotates|is annotated', path)
            self.assertIn('no ccltune.io/injected annotation', said, path)
        failed = [r for r in self.env.admission_records() if r.get('name') == 'while-down']
        self.assertEqual(len(failed), 1, failed)
        self.assertEqual(failed[0]['annotation'], 'failed-open.mutation.webhook.admission.k8s.io/round_0_index_0')
        self.assertIn('Connection refused', failed[0]['error'])
        # Strict mode (failurePolicy Fail, docs/inject.md): the create is refused instead.
        code, cfg = self.env.api('GET', HOOKS + '/ccltune-inject')
        cfg['webhooks'][0]['failurePolicy'] = 'Fail'
        self.env.check(self.env.api('PUT', HOOKS + '/ccltune-inject', cfg), 200)
        code, body = self.env.api('POST', '/api/v1/namespaces/%s/pods' % OPTED_NS, pod('strict', inject='preload'))
        self.assertEqual(code, 500, body)
        self.assertIn('failed calling webhook "inject.ccltune.io"', body['message'])


class RotationTest(unittest.TestCase):
    def setUp(self):
        # 30 s certificates, renewed after 20 s, the Secret checked every second.
        self.env = InjectEnv(controller_args=['--webhook-cert-validity', '30', '--webhook-cert-check', '1'])
        self.addCleanup(lambda: self.env.close(failed=test_failed(self)))

    def test_rotation_while_pods_are_created(self):
        first = self.env.secret()['data']['tls.crt']
        self.assertEqual(len(cert_pems(self.env.ca_bundle())), 1)
        n, end = 0, time.monotonic() + 30
        while time.monotonic() < end:
            p = self.env.create(pod('rot-%d' % n, inject='plugin'))
            self.assertEqual(p['metadata']['annotations'].get('ccltune.io/injected'), 'plugin', 'pod %d' % n)
            n += 1
            time.sleep(0.1)
        self.assertNotEqual(self.env.secret()['data']['tls.crt'], first)
        wait_until(self.env.ca_bundle_current, 10, 'caBundle to follow the renewed Secret')
        self.assertEqual(len(cert_pems(self.env.ca_bundle())), 2)   # new CA + the previous one
        # The webhook presents the renewed certificate (it waits until the caBundle held its CA).
        wait_until(self.presents_secret_cert, 10, 'the webhook to present the renewed certificate')
        self.assertFalse([r for r in self.env.admission_records() if 'error' in r])
        self.assertGreater(n, 50)

    def presents_secret_cert(self):
        ctx = ssl.create_default_context()
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE  # compared below, not trusted
        with socket.create_connection(('127.0.0.1', self.env.port), timeout=5) as raw:
            with ctx.wrap_socket(raw) as tls:
                presented = tls.getpeercert(binary_form=True)
        want = base64.b64decode(self.env.secret()['data']['tls.crt']).decode()
        return presented == ssl.PEM_cert_to_DER_cert(want)


class InjectAbuseTest(unittest.TestCase):
    """Bad requests straight at the webhook's port (the API server never sends them)."""

    def setUp(self):
        self.env = InjectEnv()
        self.addCleanup(lambda: self.env.close(failed=test_failed(self)))
        ca = base64.b64decode(self.env.ca_bundle()).decode()
        self.ctx = ssl.create_default_context(cadata=ca)

    def post(self, body, timeout=10):
        import http.client
        c = http.client.HTTPSConnection('127.0.0.1', self.env.port, timeout=timeout, context=self.ctx)
        c.request('POST', '/mutate-pods', body=body, headers={'Content-Type': 'application/json'})
        r = c.getresponse()
        out = r.status, r.read()
        c.close()
        return out

    def review(self, obj, kind='Pod'):
        return json.dumps({'apiVersion': 'admission.k8s.io/v1', 'kind': 'AdmissionReview',
                           'request': {'uid': 'u', 'operation': 'CREATE', 'object': obj,
                                       'kind': {'group': '', 'version': 'v1', 'kind': kind}}}).encode()

    def test_bad_requests_get_400_413_408_or_allow_and_the_controller_stays_up(self):
        self.assertEqual(self.post(b'{not json')[0], 400)
        self.assertEqual(self.post(b'[' * 200000)[0], 400)
        self.assertEqual(self.post(b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}')[0], 400)
        code, body = self.post(self.review({'metadata': {'name': 's'}}, kind='Service'))
        self.assertEqual((code, 'patch' in json.loads(body)['response']), (200, False))
        code, body = self.post(self.review({'metadata': 5, 'spec': []}))
        self.assertEqual((code, json.loads(body)), (400, {'error': 'request.object.metadata: expected an object'}))
        huge = pod('huge', inject='preload')
        huge['metadata']['annotations'] = {'blob': 'x' * (2 * 1024 * 1024)}
        code, body = self.post(self.review(huge))
        self.assertEqual((code, json.loads(body)['response']['patchType']), (200, 'JSONPatch'))
        self.assertEqual(self.post(b'x' * (4 * 1024 * 1024))[0], 413)
        # A client that sends its body one byte a second: answered 408 within the bound.
        s = socket.create_connection(('127.0.0.1', self.env.port))
        t = self.ctx.wrap_socket(s, server_hostname='127.0.0.1')
        t.sendall(b'POST /mutate-pods HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n')
        t0, answer = time.monotonic(), b''
        t.settimeout(1.2)
        while time.monotonic() - t0 < 15 and not answer:
            try:
                t.sendall(b'{')
                answer = t.recv(200)
            except socket.timeout:
                continue
            except OSError:
                break
        t.close()
        self.assertLess(time.monotonic() - t0, 8)
        self.assertTrue(answer.startswith(b'HTTP/1.1 408') or answer == b'', answer)
        # A client that never says hello: the TLS handshake is bounded too.
        idle = socket.create_connection(('127.0.0.1', self.env.port))
        idle.settimeout(15)
        t0 = time.monotonic()
        self.assertEqual(idle.recv(10), b'')
        self.assertLess(time.monotonic() - t0, 8)
        idle.close()
        self.assertIsNone(self.env.proc.poll(), 'controller exited')
        self.assertEqual(self.env.create(pod('after', inject='plugin'))['metadata']['annotations']['ccltune.io/injected'], 'plugin')


    def test_fields_of_the_wrong_type_get_400_naming_the_field(self):
        cases = (
            ('/request/object/metadata/name', 5, 'request.object.metadata.name: expected a string'),
            ('/request/operation', 5, 'request.operation: expected a string'),
            ('/request/kind', 'Pod', 'request.kind: expected an object'),
            ('/request/uid', 7, 'request.uid: expected a string'),
            ('/request/object/metadata/labels', ['x'], 'request.object.metadata.labels: expected an object'),
            ('/request/object/spec/containers', {}, 'request.object.spec.containers: expected an array'),
            ('/request/object/spec/containers/0/name', 1, 'request.object.spec.containers[0].name: expected a string'),
            ('/request/object/spec/containers/0/env', {'A': '1'}, 'request.object.spec.containers[0].env: expected an array'),
            ('/request/object/spec/containers/0/env', [{'name': 1}], 'request.object.spec.containers[0].env[0].name: expected a string'),
            ('/request/object/spec/containers/0/ports', [{'containerPort': '9464'}],
             'request.object.spec.containers[0].ports[0].containerPort: expected an integer'),
        )
        for pointer, value, error in cases:
            review = json.loads(self.review(pod('typed', inject='preload')))
            *parents, last = pointer.strip('/').split('/')
            at = review
            for key in parents:
                at = at[int(key)] if isinstance(at, list) else at[key]
            at[int(last) if isinstance(at, list) else last] = value
            code, body = self.post(json.dumps(review).encode())
            self.assertEqual((code, body), (400, json.dumps({'error': error}, separators=(',', ':')).encode()), pointer)
        self.assertIsNone(self.env.proc.poll(), 'controller exited')


class BindAddressTest(unittest.TestCase):
    """--webhook-bind-address and --metrics-bind-address: the listeners on one address."""

    def test_bind_addresses_narrow_the_webhook_and_api_listeners_to_one_address(self):
        env = InjectEnv(bind_host='127.0.0.1')
        self.addCleanup(lambda: env.close(failed=test_failed(self)))
        # The API server (the simulator, calling 127.0.0.1) still reaches the webhook.
        got = env.create(pod('bound', inject='plugin'))
        self.assertEqual(got['metadata']['annotations']['ccltune.io/injected'], 'plugin')
        with urllib.request.urlopen('http://127.0.0.1:%d/metrics' % env.metrics_port, timeout=10) as r:
            self.assertEqual(r.status, 200)
        for port in (env.port, env.metrics_port):
            self.assertTrue(connects('127.0.0.1', port), port)
            self.assertFalse(connects(OTHER_LOOPBACK, port), port)

    def test_a_bad_or_doubled_bind_address_stops_the_controller_naming_the_flag(self):
        for args, named in ((['--metrics-port', '8080', '--metrics-bind-address', '127.0.0.1:9090'], '--metrics-bind-address'),
                            (['--webhook-port', '9443', '--webhook-bind-address', ':9444'], '--webhook-bind-address'),
                            (['--webhook-bind-address', 'localhost:9443'], '--webhook-bind-address'),
                            (['--webhook-bind-address', '127.0.0.1:0'], '--webhook-bind-address'),
                            (['--metrics-bind-address', '127.0.0.1'], '--metrics-bind-address')):
            r = subprocess.run([CONTROLLER_BIN, '--kubeconfig', '/nonexistent'] + args,
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(named, r.stderr, args)


if __name__ == '__main__':
    unittest.main()

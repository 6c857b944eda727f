#!/usr/bin/python3
"""ccltune's Kubernetes API-server simulator (see README.md next to this file).

    /usr/bin/python3 tests/k8s/sim/apiserver.py --port 0 --port-file F --kubeconfig-out KC \
        [--token T] [--https] [--node-agent --nodes N] [--history 1000] [--bookmark-interval 10]
"""

import argparse
import base64
import copy
import hashlib
import http.server
import json
import os
import random
import re
import signal
import socketserver
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import k8sadmission  # noqa: E402
import k8saudit      # noqa: E402
import k8spatch      # noqa: E402
import k8sproto      # noqa: E402
import k8sselect     # noqa: E402
import k8sstore      # noqa: E402
import k8stable      # noqa: E402
import k8stypes      # noqa: E402
from k8sstore import ApiError, bad_request  # noqa: E402

MAX_BODY = 3 * 1024 * 1024
# Types whose registry sets ReturnDeletedObject: a delete answers with the object, not a Status.
RETURN_DELETED_OBJECT = {('', 'pods'), ('', 'serviceaccounts'), ('', 'services'), ('', 'namespaces')}
VERSION = {'major': '1', 'minor': '32', 'gitVersion': 'v1.32.0-ccltune-sim', 'gitCommit': '0000000000000000000000000000000000000000',
           'gitTreeState': 'clean', 'buildDate': '2026-01-01T00:00:00Z', 'goVersion': 'go1.23.0', 'compiler': 'gc',
           'platform': 'linux/amd64'}


def qbool(v):
    """Go's strconv.ParseBool, as the API server parses boolean query parameters."""
    return v in ('1', 't', 'T', 'TRUE', 'true', 'True')


def _version_key(v):
    m = re.match(r'^v(\d+)(?:(alpha|beta)(\d+))?$', v)
    if not m:
        return (3, 0, 0, v)
    stage = {'alpha': 2, 'beta': 1, None: 0}[m.group(2)]
    return (stage, -int(m.group(1)), -int(m.group(3) or 0), v)


class Faults:
    """Injected failures: POST /_sim/faults {verb, resource, subresource, namespace, name, code, count, message}."""

    def __init__(self):
        self.lock = threading.Lock()
        self.rules = []

    def add(self, rule):
        rule = dict(rule)
        rule.setdefault('count', 1)
        rule.setdefault('code', 500)
        with self.lock:
            self.rules.append(rule)

    def clear(self):
        with self.lock:
            self.rules = []

    def take(self, verb, rt, sub, ns, name):
        with self.lock:
            for r in self.rules:
                if r.get('verb', '*') not in ('*', verb):
                    continue
                if r.get('resource', '*') not in ('*', rt.plural, rt.qualified):
                    continue
                if r.get('subresource', '') not in ('*', sub or ''):
                    continue
                if r.get('namespace') and r['namespace'] != ns:
                    continue
                if r.get('name') and r['name'] != name:
                    continue
                r['count'] -= 1
                if r['count'] <= 0:
                    self.rules.remove(r)
                return r
        return None


class Server:
    def __init__(self, args):
        self.args = args
        self.store = k8sstore.Store(history=args.history)
        self.faults = Faults()
        self.agent = None
        self.stop = threading.Event()
        self.port = None
        self.stats = {'requests': 0}
        self.admission = k8sadmission.Admission(self.store)
        self.audit = k8saudit.AuditLog()

    # ---- discovery -----------------------------------------------------------
    def groups(self):
        out = {}
        for rt in self.store.all_types():
            if rt.group:
                out.setdefault(rt.group, set()).update(rt.versions)
        res = []
        for g in sorted(out):
            vs = sorted(out[g], key=_version_key)
            res.append({'name': g, 'versions': [{'groupVersion': '%s/%s' % (g, v), 'version': v} for v in vs],
                        'preferredVersion': {'groupVersion': '%s/%s' % (g, vs[0]), 'version': vs[0]}})
        return res

    def resource_list(self, group, version):
        res = []
        found = False
        for rt in sorted(self.store.all_types(), key=lambda r: r.plural):
            if rt.group != group or version not in rt.versions:
                continue
            found = True
            e = {'name': rt.plural, 'singularName': rt.singular, 'namespaced': rt.namespaced, 'kind': rt.kind,
                 'verbs': k8stypes.VERBS,
                 'storageVersionHash': base64.b64encode(hashlib.sha256(('%s/%s' % rt.key).encode()).digest()[:8]).decode()}
            if rt.short_names:
                e['shortNames'] = rt.short_names
            if rt.categories:
                e['categories'] = rt.categories
            res.append(e)
            if rt.status:
                res.append({'name': rt.plural + '/status', 'singularName': '', 'namespaced': rt.namespaced,
                            'kind': rt.kind, 'verbs': ['get', 'patch', 'update']})
            if rt.key == ('', 'pods'):
                res.append({'name': 'pods/log', 'singularName': '', 'namespaced': True, 'kind': 'Pod', 'verbs': ['get']})
        if not found:
            return None
        return {'kind': 'APIResourceList', 'apiVersion': 'v1', 'groupVersion': '%s/%s' % (group, version) if group else version,
                'resources': res}

    def openapi_v3_index(self):
        paths = {}
        for rt in self.store.all_types():
            for v in rt.versions:
                p = 'apis/%s/%s' % (rt.group, v) if rt.group else 'api/%s' % v
                paths[p] = None
        out = {}
        for p in sorted(paths):
            h = hashlib.sha256(json.dumps(self._openapi_gv(p), sort_keys=True).encode()).hexdigest()[:32].upper()
            out[p] = {'serverRelativeURL': '/openapi/v3/%s?hash=%s' % (p, h)}
        return {'paths': out}

    def _openapi_gv(self, p):
        parts = p.split('/')
        group, version = ('', parts[1]) if parts[0] == 'api' else (parts[1], parts[2])
        paths = {}
        schemas = {}
        params = [{'name': n, 'in': 'query', 'schema': {'type': 'string', 'uniqueItems': True}}
                  for n in ('dryRun', 'fieldManager', 'fieldValidation', 'force', 'pretty')]
        for rt in self.store.all_types():
            if rt.group != group or version not in rt.versions:
                continue
            gvk = {'group': group, 'version': version, 'kind': rt.kind}
            base = '/' + p + ('/namespaces/{namespace}' if rt.namespaced else '') + '/' + rt.plural + '/{name}'
            schema_name = '%s.%s.%s' % (group or 'core', version, rt.kind)
            schemas[schema_name] = rt.schema(version) or {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True}
            schemas[schema_name] = dict(schemas[schema_name], **{'x-kubernetes-group-version-kind': [gvk]})
            ref = {'$ref': '#/components/schemas/' + schema_name}
            content = {'application/json': {'schema': ref}}
            paths[base] = {
                'get': {'x-kubernetes-action': 'get', 'x-kubernetes-group-version-kind': gvk,
                        'responses': {'200': {'description': 'OK', 'content': content}}},
                'put': {'x-kubernetes-action': 'put', 'x-kubernetes-group-version-kind': gvk, 'parameters': params,
                        'requestBody': {'content': {'*/*': {'schema': ref}}},
                        'responses': {'200': {'description': 'OK', 'content': content}}},
                'patch': {'x-kubernetes-action': 'patch', 'x-kubernetes-group-version-kind': gvk, 'parameters': params,
                          'requestBody': {'content': {t: {'schema': {'type': 'object'}} for t in
                                                      ('application/json-patch+json', 'application/merge-patch+json',
                                                       'application/apply-patch+yaml')}},
                          'responses': {'200': {'description': 'OK', 'content': content}}},
                'delete': {'x-kubernetes-action': 'delete', 'x-kubernetes-group-version-kind': gvk,
                           'responses': {'200': {'description': 'OK'}}},
                'parameters': [{'name': 'name', 'in': 'path', 'required': True, 'schema': {'type': 'string'}}] +
                              ([{'name': 'namespace', 'in': 'path', 'required': True, 'schema': {'type': 'string'}}]
                               if rt.namespaced else [])}
        return {'openapi': '3.0.0', 'info': {'title': 'Kubernetes', 'version': 'v1.32.0'}, 'paths': paths,
                'components': {'schemas': schemas}}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    disable_nagle_algorithm = True
    server_version = 'ccltune-apiserver-sim'
    sim = None   # the Server, set at start-up

    def send_response(self, code, message=None):
        k8saudit.AuditLog.respond(getattr(self, 'audit_event', None), code)
        super().send_response(code, message)

    def log_message(self, fmt, *a):
        if self.sim.args.verbose:
            sys.stderr.write('[sim] %s %s\n' % (self.address_string(), fmt % a))

    # ---- plumbing ------------------------------------------------------------
    def send_json(self, code, obj, headers=None):
        body = json.dumps(obj, separators=(',', ':')).encode()
        self.send_response(code)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.send_header('Cache-Control', 'no-cache, private')
        ev = getattr(self, 'audit_event', None)
        self.send_header('Audit-Id', ev['auditID'] if ev else '00000000-0000-0000-0000-%012d' % random.randint(0, 10 ** 12))
        for k, v in (headers or {}).items():
            if isinstance(v, list):
                for x in v:
                    self.send_header(k, x)
            else:
                self.send_header(k, v)
        self.end_headers()
        if self.command != 'HEAD':
            self.wfile.write(body)

    def send_raw(self, code, body, ctype):
        self.send_response(code)
        self.send_header('Content-Type', ctype)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        if self.command != 'HEAD':
            self.wfile.write(body)

    def send_error_obj(self, err):
        self.send_json(err.code, err.status(), err.headers)

    def read_body(self):
        te = self.headers.get('Transfer-Encoding', '')
        if 'chunked' in te.lower():
            data = b''
            while True:
                line = self.rfile.readline()
                n = int(line.strip().split(b';')[0], 16)
                if n == 0:
                    self.rfile.readline()
                    break
                data += self.rfile.read(n)
                self.rfile.readline()
                if len(data) > MAX_BODY:
                    self.close_connection = True
                    raise ApiError(413, 'RequestEntityTooLarge', 'the request body is too large (limit %d bytes)' % MAX_BODY)
            return data
        n = int(self.headers.get('Content-Length') or 0)
        if n > MAX_BODY:
            self.close_connection = True
            raise ApiError(413, 'RequestEntityTooLarge', 'Request entity too large: limit is %d' % MAX_BODY)
        return self.rfile.read(n) if n else b''

    def body_json(self, data):
        ct = self.headers.get('Content-Type', '')
        if 'protobuf' in ct:
            try:
                return k8sproto.decode(data)
            except (ValueError, IndexError, UnicodeDecodeError) as e:
                raise ApiError(415, 'UnsupportedMediaType', 'the body of the request was in an unknown format (%s) - accepted media '
                               'types include: application/json, application/yaml (the simulator only decodes protobuf for '
                               'Namespace, ConfigMap, Secret, ServiceAccount)' % e)
            raise ApiError(415, 'UnsupportedMediaType', 'the body of the request was in an unknown format - accepted media '
                           'types include: application/json, application/yaml (the simulator does not decode protobuf)')
        if not data:
            raise bad_request('the body of the request was empty')
        try:
            return json.loads(data)
        except ValueError as e:
            ct = self.headers.get('Content-Type', '')
            if 'yaml' in ct:
                raise ApiError(415, 'UnsupportedMediaType',
                               'the simulator only decodes JSON bodies (YAML that is not JSON is not supported): %s' % e)
            raise bad_request("couldn't get version/kind; json parse error: %s" % e)

    def do_GET(self):
        self.dispatch('GET')

    def do_HEAD(self):
        self.dispatch('GET')

    def do_POST(self):
        self.dispatch('POST')

    def do_PUT(self):
        self.dispatch('PUT')

    def do_PATCH(self):
        self.dispatch('PATCH')

    def do_DELETE(self):
        self.dispatch('DELETE')

    def dispatch(self, method):
        sim = self.sim
        sim.stats['requests'] += 1
        url = urllib.parse.urlsplit(self.path)
        q = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query, keep_blank_values=True).items()}
        path = url.path.rstrip('/') or '/'
        self.audit_event = None
        if not path.startswith('/_sim/'):
            self.audit_event = sim.audit.begin(method, self.path, self.headers, self.client_address[0])
        try:
            body = self.read_body() if method in ('POST', 'PUT', 'PATCH', 'DELETE') else b''
            if path.startswith('/_sim/'):
                return self.control(method, path, q, body)
            if path in ('/healthz', '/readyz', '/livez'):
                return self.send_raw(200, b'ok', 'text/plain; charset=utf-8')
            if sim.args.token:
                auth = self.headers.get('Authorization', '')
                if auth != 'Bearer ' + sim.args.token:
                    raise ApiError(401, 'Unauthorized', 'Unauthorized')
            if path == '/version':
                return self.send_json(200, VERSION)
            if path == '/api':
                return self.send_json(200, {'kind': 'APIVersions', 'versions': ['v1'], 'serverAddressByClientCIDRs': [
                    {'clientCIDR': '0.0.0.0/0', 'serverAddress': '127.0.0.1:%d' % sim.port}]})
            if path == '/apis':
                return self.send_json(200, {'kind': 'APIGroupList', 'apiVersion': 'v1', 'groups': sim.groups()})
            if path == '/openapi/v2':
                if 'protobuf' in self.headers.get('Accept', ''):
                    # an empty openapi_v2.Document: kubectl then knows no schemas and skips client-side validation
                    return self.send_raw(200, b'', 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf')
                return self.send_json(200, {'swagger': '2.0', 'info': {'title': 'Kubernetes', 'version': 'v1.32.0'},
                                            'paths': {}, 'definitions': {}})
            if path == '/openapi/v3':
                return self.send_json(200, sim.openapi_v3_index())
            if path.startswith('/openapi/v3/'):
                p = path[len('/openapi/v3/'):]
                if p not in sim.openapi_v3_index()['paths']:
                    raise ApiError(404, 'NotFound', 'the server could not find the requested resource')
                return self.send_json(200, sim._openapi_gv(p))
            parts = [urllib.parse.unquote(p) for p in path.strip('/').split('/')]
            if parts[0] == 'api' and len(parts) >= 2:
                group, version, rest = '', parts[1], parts[2:]
            elif parts[0] == 'apis' and len(parts) == 2:
                g = next((x for x in sim.groups() if x['name'] == parts[1]), None)
                if g is None:
                    raise ApiError(404, 'NotFound', 'the server could not find the requested resource')
                return self.send_json(200, dict(g, kind='APIGroup', apiVersion='v1'))
            elif parts[0] == 'apis' and len(parts) >= 3:
                group, version, rest = parts[1], parts[2], parts[3:]
            else:
                raise ApiError(404, 'NotFound', 'the server could not find the requested resource')
            if not rest:
                rl = sim.resource_list(group, version)
                if rl is None:
                    raise ApiError(404, 'NotFound', 'the server could not find the requested resource')
                return self.send_json(200, rl)
            return self.resource(method, group, version, rest, q, body)
        except ApiError as e:
            self.send_error_obj(e)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as e:   # an internal error must still answer with a Status
            import traceback
            traceback.print_exc()
            try:
                self.send_error_obj(ApiError(500, 'InternalError', 'Internal error occurred: %s' % e))
            except Exception:
                self.close_connection = True

    # ---- resources -----------------------------------------------------------
    def resource(self, method, group, version, rest, q, body):
        sim = self.sim
        watch = qbool(q.get('watch'))
        if rest[0] == 'watch':
            watch, rest = True, rest[1:]
        ns = None
        if rest[0] == 'namespaces' and len(rest) >= 3 and not (len(rest) == 3 and rest[2] in ('status', 'finalize')):
            ns, rest = rest[1], rest[2:]
        plural = rest[0]
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        if len(rest) > 3:
            raise ApiError(404, 'NotFound', 'the server could not find the requested resource')
        rt = sim.store.type_for(group, version, plural)
        if rt is None:
            raise ApiError(404, 'NotFound', 'the server could not find the requested resource')
        if rt.namespaced is False and ns is not None:
            raise ApiError(404, 'NotFound', 'the server could not find the requested resource')
        if rt.namespaced and name is not None and ns is None:
            raise ApiError(404, 'NotFound', 'the server could not find the requested resource')
        if sub == 'finalize':
            sub = 'status'
        if sub and not ((sub == 'status' and rt.status) or (sub == 'log' and rt.key == ('', 'pods'))):
            raise ApiError(404, 'NotFound', 'the server could not find the requested resource')
        verb = {'GET': 'watch' if watch else ('get' if name else 'list'), 'POST': 'create', 'PUT': 'update',
                'PATCH': 'patch', 'DELETE': 'delete' if name else 'deletecollection'}[method]
        if self.audit_event is not None:
            self.audit_event['verb'] = verb
            ref = {'resource': plural, 'apiGroup': group, 'apiVersion': version}
            ref.update({k: v for k, v in (('namespace', ns), ('name', name), ('subresource', sub)) if v})
            self.audit_event['objectRef'] = ref
        if method == 'POST' and name:
            raise ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource')
        fault = sim.faults.take(verb, rt, sub, ns, name)
        if fault:
            if fault.get('delaySeconds'):
                time.sleep(float(fault['delaySeconds']))
            if fault.get('code'):
                code = int(fault['code'])
                if code == 409:
                    raise k8sstore.conflict(rt, name or '')
                reason = {500: 'InternalError', 503: 'ServiceUnavailable', 429: 'TooManyRequests', 404: 'NotFound',
                          403: 'Forbidden', 410: 'Expired', 504: 'Timeout'}.get(code, 'InternalError')
                hdr = {'Retry-After': '1'} if code in (429, 503) else {}
                raise ApiError(code, reason, fault.get('message') or 'injected fault (%d) by the simulator' % code, headers=hdr)
        dry = 'All' in (q.get('dryRun') or '')
        strict = q.get('fieldValidation') == 'Strict'
        warnings = []
        store = sim.store
        if method == 'GET':
            if sub == 'log':
                return self.pod_log(rt, ns, name, q)
            if watch:
                return self.watch(rt, version, ns, name, q)
            if name:
                obj = store.get(rt, ns, name)
                return self.send_obj(rt, version, obj)
            return self.list(rt, version, ns, q)
        if method == 'POST':
            obj = self.body_json(body)
            self.check_kind(rt, version, obj)
            obj = self.admit(rt, version, ns, obj, dry)
            created = store.create(rt, ns, obj, dry_run=dry, version=version, strict=strict, warnings=warnings)
            return self.send_obj(rt, version, created, 201, warnings)
        if method == 'PUT':
            obj = self.body_json(body)
            self.check_kind(rt, version, obj)
            updated = store.update(rt, ns, name, obj, subresource=sub, dry_run=dry, version=version, strict=strict,
                                   warnings=warnings, allow_create=rt.key in (('', 'events'), ('coordination.k8s.io', 'leases')))
            return self.send_obj(rt, version, updated, 200, warnings)
        if method == 'PATCH':
            return self.patch(rt, version, ns, name, sub, body, q, dry, strict, warnings)
        if method == 'DELETE':
            opts = {}
            if body:
                try:
                    opts = json.loads(body)
                except ValueError:
                    raise bad_request('invalid DeleteOptions body')
            for k in ('propagationPolicy', 'gracePeriodSeconds', 'orphanDependents'):
                if k in q:
                    opts[k] = int(q[k]) if k == 'gracePeriodSeconds' else (qbool(q[k]) if k == 'orphanDependents' else q[k])
            if name is None:
                items, _ = store.list(rt, ns, self.predicate(rt, q))
                for o in items:
                    try:
                        store.delete(rt, o['metadata'].get('namespace'), o['metadata']['name'], opts, dry_run=dry)
                    except ApiError:
                        pass
                return self.send_json(200, {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Success'})
            before = store.get(rt, ns, name)
            obj = store.delete(rt, ns, name, opts, dry_run=dry)
            gone = not dry and not obj['metadata'].get('deletionTimestamp') or (
                not dry and before['metadata'].get('deletionTimestamp') and not store.exists(rt, ns, name))
            if gone and rt.key not in RETURN_DELETED_OBJECT:
                # kube-apiserver answers an immediate delete with a Status unless the type returns the object
                details = {'name': name, 'kind': rt.plural, 'uid': obj['metadata'].get('uid', '')}
                if rt.group:
                    details['group'] = rt.group
                return self.send_json(200, {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Success',
                                            'details': details})
            return self.send_obj(rt, version, obj, 200)

    def admit(self, rt, version, ns, obj, dry):
        """Mutating webhooks (k8sadmission.py) see the object as kube-apiserver hands it to them:
        defaulted (pods), in the request's namespace; outside the store's lock, so that a slow
        webhook holds up only its own request."""
        if rt.key == ('', 'pods') and isinstance(obj.get('spec', {}), dict):
            obj = copy.deepcopy(obj)
            k8sstore._default_pod(obj)
            obj.pop('status', None)
        if rt.namespaced:
            md = obj.get('metadata') if isinstance(obj.get('metadata'), dict) else {}
            ns = ns or md.get('namespace') or 'default'
            if isinstance(obj.get('metadata'), dict):
                obj = dict(obj, metadata=dict(md, namespace=ns))
        return self.sim.admission.admit(rt, version, obj, ns if rt.namespaced else None, dry)

    def check_kind(self, rt, version, obj):
        if not isinstance(obj, dict):
            raise bad_request('the body of the request was in an unknown format')
        kind = obj.get('kind')
        av = obj.get('apiVersion')
        if kind and kind != rt.kind:
            raise bad_request('the API version in the data (%s) does not match the expected API version (%s)' % (av, rt.api_version(version))
                              if av != rt.api_version(version) else
                              'the kind in the data (%s) does not match the expected kind (%s)' % (kind, rt.kind))
        if av and av != rt.api_version(version) and not (rt.crd is not None and av.split('/')[0] == rt.group
                                                          and av.split('/')[-1] in rt.versions):
            raise bad_request('the API version in the data (%s) does not match the expected API version (%s)' % (av, rt.api_version(version)))

    def versioned(self, rt, version, obj):
        if rt.crd is not None and version != rt.storage_version:
            obj = dict(obj, apiVersion=rt.api_version(version))
        elif rt.crd is not None:
            obj = dict(obj, apiVersion=rt.api_version(version))
        return obj

    def wants_table(self):
        return 'as=Table' in self.headers.get('Accept', '')

    def send_obj(self, rt, version, obj, code=200, warnings=None):
        headers = {}
        if warnings:
            headers['Warning'] = ['299 - "%s"' % w.replace('"', '\\"') for w in warnings]
        obj = self.versioned(rt, version, obj)
        if self.wants_table() and self.command == 'GET':
            q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
            return self.send_json(code, k8stable.table(rt, version, [obj], obj['metadata'].get('resourceVersion', ''),
                                                       include=q.get('includeObject', 'Metadata')), headers)
        return self.send_json(code, obj, headers)

    def predicate(self, rt, q):
        try:
            lreq = k8sselect.parse_label_selector(q.get('labelSelector', ''))
            freq = k8sselect.parse_field_selector(q.get('fieldSelector', ''))
        except k8sselect.SelectorError as e:
            raise bad_request(str(e))
        allowed = {'metadata.name', 'metadata.namespace'} | k8stypes.FIELD_LABELS.get(rt.key, set())
        if rt.crd is not None:
            for v in rt.crd.get('spec', {}).get('versions', []):
                for f in v.get('selectableFields') or []:
                    allowed.add(f.get('jsonPath', '').lstrip('.'))
        for k, _, _ in freq:
            if k not in allowed:
                raise bad_request('"%s" is not a known field selector: only "%s"' % (k, '", "'.join(sorted(allowed))))
        if not lreq and not freq:
            return None

        def pred(o):
            return k8sselect.label_match(lreq, o.get('metadata', {}).get('labels')) and k8sselect.field_match(freq, o)
        return pred

    def list(self, rt, version, ns, q):
        pred = self.predicate(rt, q)
        items, rv = self.sim.store.list(rt, ns, pred)
        cont = None
        remaining = None
        if q.get('continue'):
            try:
                tok = json.loads(base64.urlsafe_b64decode(q['continue'].encode()))
                start = (tok['ns'], tok['name'])
            except Exception:
                raise bad_request('continue key is not valid')
            self.sim.store.check_rv_fresh(tok.get('rv', '0'))
            items = [o for o in items if (o['metadata'].get('namespace', ''), o['metadata']['name']) > start]
        limit = int(q.get('limit') or 0)
        if limit > 0 and len(items) > limit:
            last = items[limit - 1]['metadata']
            cont = base64.urlsafe_b64encode(json.dumps({'rv': rv, 'ns': last.get('namespace', ''), 'name': last['name']}).encode()).decode()
            remaining = len(items) - limit
            items = items[:limit]
        items = [self.versioned(rt, version, o) for o in items]
        if self.wants_table():
            return self.send_json(200, k8stable.table(rt, version, items, rv, include=q.get('includeObject', 'Metadata'),
                                                      cont=cont, remaining=remaining))
        md = {'resourceVersion': rv}
        if cont:
            md['continue'] = cont
            md['remainingItemCount'] = remaining
        return self.send_json(200, {'kind': rt.list_kind, 'apiVersion': rt.api_version(version), 'metadata': md, 'items': items})

    def patch(self, rt, version, ns, name, sub, body, q, dry, strict, warnings):
        store = self.sim.store
        ct = (self.headers.get('Content-Type') or '').split(';')[0].strip()
        if ct not in ('application/merge-patch+json', 'application/strategic-merge-patch+json',
                      'application/json-patch+json', 'application/apply-patch+yaml'):
            raise ApiError(415, 'UnsupportedMediaType', 'the body of the request was in an unknown format - accepted media types '
                           'include: application/json-patch+json, application/merge-patch+json, '
                           'application/apply-patch+yaml, application/strategic-merge-patch+json')
        if ct == 'application/strategic-merge-patch+json' and rt.crd is not None:
            # what kube-apiserver answers for CRs (`kubectl patch` without --type=merge)
            raise ApiError(415, 'UnsupportedMediaType', 'the body of the request was in an unknown format - accepted media '
                           'types include: application/json-patch+json, application/merge-patch+json, '
                           'application/apply-patch+yaml')
        p = self.body_json(body)
        for attempt in range(2):
            with store.lock:
                try:
                    cur = store.get(rt, ns, name)
                except ApiError as e:
                    if ct == 'application/apply-patch+yaml' and e.code == 404 and not sub:
                        self.check_kind(rt, version, p)
                        if isinstance(p, dict) and isinstance(p.get('metadata', {}), dict):
                            p.setdefault('metadata', {}).setdefault('name', name)
                        obj = store.create(rt, ns, p, dry_run=dry, version=version, strict=strict, warnings=warnings)
                        return self.send_obj(rt, version, obj, 201, warnings)
                    raise
                try:
                    if ct == 'application/json-patch+json':
                        new = k8spatch.json_patch(cur, p)
                    elif ct == 'application/strategic-merge-patch+json':
                        if not isinstance(p, dict):
                            raise bad_request('strategic merge patch must be a JSON object')
                        new = k8spatch.strategic_merge_patch(cur, p)
                    else:
                        if not isinstance(p, dict):
                            raise bad_request('merge patch must be a JSON object')
                        if ct == 'application/apply-patch+yaml':
                            self.check_kind(rt, version, p)
                        new = k8spatch.merge_patch(cur, p)
                except k8spatch.PatchError as e:
                    raise ApiError(422, 'Invalid', str(e))
                if not isinstance(new, dict):
                    raise bad_request('the patch produced an object of an unknown format')
                pmd = p.get('metadata') if isinstance(p, dict) else None
                md = new.setdefault('metadata', {})
                if isinstance(pmd, dict) and pmd.get('resourceVersion'):
                    md['resourceVersion'] = pmd['resourceVersion']       # a precondition, as in Kubernetes
                else:
                    md['resourceVersion'] = cur['metadata']['resourceVersion']
                obj = store.update(rt, ns, name, new, subresource=sub, dry_run=dry, version=version, strict=strict,
                                   warnings=warnings)
                return self.send_obj(rt, version, obj, 200, warnings)

    # ---- watch ---------------------------------------------------------------
    def watch(self, rt, version, ns, name, q):
        sim = self.sim
        store = sim.store
        if name:
            q = dict(q)
            fs = q.get('fieldSelector', '')
            q['fieldSelector'] = ('metadata.name=%s' % name) + (',' + fs if fs else '')
        pred = self.predicate(rt, q)
        rv = q.get('resourceVersion')
        send_initial = qbool(q.get('sendInitialEvents'))
        if send_initial:
            rv = None
        timeout = float(q.get('timeoutSeconds') or 0) or sim.args.watch_timeout * (1 + random.random())
        bookmarks = qbool(q.get('allowWatchBookmarks'))
        table = self.wants_table()
        try:
            w, initial = store.watch(rt, ns, rv)
        except ApiError as e:
            if e.code != 410:
                raise
            w, initial = None, None
            expired = e
        self.send_response(200)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Transfer-Encoding', 'chunked')
        self.send_header('Cache-Control', 'no-cache, private')
        self.end_headers()
        self.wfile.flush()
        first_table = [True]

        def emit(type_, obj):
            if table and type_ in ('ADDED', 'MODIFIED', 'DELETED'):
                obj = k8stable.table(rt, version, [obj], obj['metadata'].get('resourceVersion', ''),
                                     include=q.get('includeObject', 'Metadata'), with_columns=first_table[0])
                first_table[0] = False
            data = json.dumps({'type': type_, 'object': obj}, separators=(',', ':')).encode() + b'\n'
            self.wfile.write(b'%x\r\n%s\r\n' % (len(data), data))
            self.wfile.flush()

        def deliver(ev):
            newm = pred is None or pred(ev.obj)
            if ev.type == 'ADDED':
                if newm:
                    emit('ADDED', self.versioned(rt, version, ev.obj))
                return
            if ev.type == 'DELETED':
                if newm:
                    emit('DELETED', self.versioned(rt, version, ev.obj))
                return
            oldm = pred is None or (ev.old is not None and pred(ev.old))
            if newm and oldm:
                emit('MODIFIED', self.versioned(rt, version, ev.obj))
            elif newm:
                emit('ADDED', self.versioned(rt, version, ev.obj))
            elif oldm:
                emit('DELETED', self.versioned(rt, version, ev.obj))

        def bookmark(extra_annotations=None):
            with store.lock:
                if not w.q.empty():
                    return False
                md = {'resourceVersion': str(store.rv)}
            if extra_annotations:
                md['annotations'] = extra_annotations
            emit('BOOKMARK', {'kind': rt.kind, 'apiVersion': rt.api_version(version), 'metadata': md})
            return True

        try:
            if w is None:
                emit('ERROR', expired.status())
                return self.end_chunks()
            for ev in initial:
                deliver(ev)
            if send_initial:
                bookmark({'k8s.io/initial-events-end': 'true'})
            deadline = time.monotonic() + timeout
            interval = sim.args.bookmark_interval
            next_bm = time.monotonic() + interval
            while not sim.stop.is_set():
                now = time.monotonic()
                if now >= deadline:
                    break
                if bookmarks and now >= next_bm:
                    if bookmark():
                        next_bm = now + interval
                wait = min(deadline - now, 0.5, max(next_bm - now, 0.01) if bookmarks else 0.5)
                try:
                    ev = w.q.get(timeout=wait)
                except Exception:
                    continue
                if ev is None:        # /_sim/close-watches
                    break
                deliver(ev)
            self.end_chunks()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            self.close_connection = True
        finally:
            if w is not None:
                store.unwatch(w)

    def end_chunks(self):
        """Ends a chunked stream; the connection stays open for the next request, as in Go's server."""
        try:
            self.wfile.write(b'0\r\n\r\n')
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    # ---- logs ----------------------------------------------------------------
    def pod_log(self, rt, ns, name, q):
        pod = self.sim.store.get(rt, ns, name)
        agent = self.sim.agent
        path = agent.log_path(pod) if agent else None
        if not path or not os.path.exists(path):
            cname = ((pod.get('spec', {}).get('containers') or [{}])[0]).get('name', '')
            raise bad_request('container "%s" in pod "%s" is waiting to start: ContainerCreating' % (cname, name))
        follow = qbool(q.get('follow'))
        tail = int(q['tailLines']) if q.get('tailLines') else None
        limit = int(q['limitBytes']) if q.get('limitBytes') else None
        with open(path, 'rb') as f:
            data = f.read()
        if tail is not None:
            lines = data.splitlines(keepends=True)
            data = b''.join(lines[-tail:]) if tail > 0 else b''
        if limit is not None:
            data = data[:limit]
        if not follow:
            return self.send_raw(200, data, 'text/plain')
        self.send_response(200)
        self.send_header('Content-Type', 'text/plain')
        self.send_header('Transfer-Encoding', 'chunked')
        self.end_headers()
        try:
            if data:
                self.wfile.write(b'%x\r\n%s\r\n' % (len(data), data))
                self.wfile.flush()
            with open(path, 'rb') as f:
                f.seek(0, 2)
                while not self.sim.stop.is_set():
                    chunk = f.read(65536)
                    if chunk:
                        self.wfile.write(b'%x\r\n%s\r\n' % (len(chunk), chunk))
                        self.wfile.flush()
                        continue
                    if not agent.is_running(pod):
                        chunk = f.read()
                        if chunk:
                            self.wfile.write(b'%x\r\n%s\r\n' % (len(chunk), chunk))
                        break
                    time.sleep(0.2)
            self.end_chunks()
        except OSError:
            self.close_connection = True

    # ---- test control --------------------------------------------------------
    def control(self, method, path, q, body):
        sim = self.sim
        store = sim.store
        what = path[len('/_sim/'):]
        data = json.loads(body) if body.strip() else {}
        if what == 'compact' and method == 'POST':
            return self.send_json(200, {'compactedTo': str(store.compact())})
        if what == 'faults' and method == 'POST':
            for r in (data if isinstance(data, list) else [data]):
                sim.faults.add(r)
            return self.send_json(200, {'faults': sim.faults.rules})
        if what == 'faults' and method == 'DELETE':
            sim.faults.clear()
            return self.send_json(200, {'faults': []})
        if what == 'faults' and method == 'GET':
            return self.send_json(200, {'faults': sim.faults.rules})
        if what == 'close-watches' and method == 'POST':
            store.close_watches()
            return self.send_json(200, {'closed': True})
        if what == 'kill' and method == 'POST':
            if not sim.agent:
                raise ApiError(400, 'BadRequest', 'no node agent (start with --node-agent)')
            pid = sim.agent.kill(data.get('namespace', 'default'), data.get('name', ''), int(data.get('signal', 9)))
            if pid is None:
                raise ApiError(404, 'NotFound', 'no running process for pod %s/%s' % (data.get('namespace', 'default'), data.get('name')))
            return self.send_json(200, {'pid': pid, 'signal': int(data.get('signal', 9))})
        if what == 'gc' and method == 'POST':
            store.gc_once()
            return self.send_json(200, {'done': True})
        if what == 'audit' and method == 'GET':
            items, nxt = sim.audit.since(int(q.get('since') or 0))
            return self.send_json(200, {'kind': 'EventList', 'apiVersion': 'audit.k8s.io/v1', 'items': items,
                                        'next': nxt})
        if what == 'state' and method == 'GET':
            with store.lock:
                counts = {'%s/%s' % k if k[0] else k[1]: len(v) for k, v in store.objects.items() if v}
                st = {'resourceVersion': str(store.rv), 'compactedAt': str(store.compacted),
                      'historyStart': {'%s/%s' % k if k[0] else k[1]: str(store.history_start[k]) for k in store.history},
                      'historySize': sum(len(h) for h in store.history.values()), 'watches': len(store.watchers),
                      'objects': counts,
                      'requests': sim.stats['requests'], 'faults': sim.faults.rules}
            st['admission'] = sim.admission.state()
            if sim.agent:
                st['processes'] = sim.agent.processes()
            return self.send_json(200, st)
        raise ApiError(404, 'NotFound', 'unknown control endpoint %s %s' % (method, path))


class ThreadingServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (ConnectionError, ssl.SSLError, TimeoutError)):
            return          # a client went away: not worth a traceback
        super().handle_error(request, client_address)


def write_kubeconfig(path, server, token, ca_pem=None):
    cluster = ['    server: %s' % server]
    if ca_pem:
        cluster.append('    certificate-authority-data: %s' % base64.b64encode(ca_pem).decode())
    text = '\n'.join([
        'apiVersion: v1', 'kind: Config', 'clusters:', '- name: ccltune-sim', '  cluster:'] + cluster + [
        'users:', '- name: ccltune-sim', '  user:', '    token: %s' % token,
        'contexts:', '- name: ccltune-sim', '  context:', '    cluster: ccltune-sim', '    user: ccltune-sim',
        '    namespace: default', 'current-context: ccltune-sim', 'preferences: {}', ''])
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        f.write(text)
    os.replace(tmp, path)


def make_cert(dirname):
    key, crt = os.path.join(dirname, 'tls.key'), os.path.join(dirname, 'tls.crt')
    subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', crt,
                    '-days', '30', '-subj', '/CN=ccltune-sim', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
                    '-addext', 'basicConstraints=critical,CA:TRUE'],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return key, crt


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--host', default='127.0.0.1')
    ap.add_argument('--port', type=int, default=0)
    ap.add_argument('--port-file', help='write the bound port here')
    ap.add_argument('--kubeconfig-out', help='write a kubeconfig for this server here')
    ap.add_argument('--token', default='', help='require this bearer token (default: accept any)')
    ap.add_argument('--https', action='store_true', help='serve HTTPS with a self-signed certificate made by openssl')
    ap.add_argument('--ca-out', help='with --https: write the certificate (PEM) here')
    ap.add_argument('--history', type=int, default=1000, help='watch events kept per resource type for resuming (older -> 410 Expired)')
    ap.add_argument('--bookmark-interval', type=float, default=10.0, help='seconds between watch BOOKMARKs')
    ap.add_argument('--watch-timeout', type=float, default=1800.0,
                    help='server-side watch timeout when the client gives no timeoutSeconds (randomised x1..x2)')
    ap.add_argument('--node-agent', action='store_true', help='run the scheduler + kubelet for fake nodes')
    ap.add_argument('--nodes', type=int, default=1, help='number of fake nodes node-0..node-N-1')
    ap.add_argument('--node-names', default='', help='comma-separated node names (overrides --nodes)')
    ap.add_argument('--node-labels', default='', help='labels every node gets, k=v,k2=v2')
    ap.add_argument('--node-pods', type=int, default=110, help='pods each node accepts (capacity)')
    ap.add_argument('--node-cpu', default='64', help='cpu capacity of each node')
    ap.add_argument('--node-memory', default='64Gi', help='memory capacity of each node')
    ap.add_argument('--node-resources', default='', help='extra capacity of each node, e.g. nvidia.com/gpu=8')
    ap.add_argument('--schedulers', default='default-scheduler', help='schedulerNames the agent schedules (comma-separated)')
    ap.add_argument('--ccltune-bin', default=os.environ.get('CCLTUNE_BIN', ''),
                    help='binary that a bare `ccltune` command maps to (default: $CCLTUNE_BIN)')
    ap.add_argument('--pod-dir', default='', help='where pod dirs (logs, mounted volumes) go (default: a temp dir)')
    ap.add_argument('--keep-pod-dirs', action='store_true')
    ap.add_argument('--verbose', action='store_true', help='log every request to stderr')
    args = ap.parse_args(argv)

    sim = Server(args)
    Handler.sim = sim
    httpd = ThreadingServer((args.host, args.port), Handler)
    sim.port = httpd.server_address[1]
    args.bound_port = sim.port
    scheme = 'http'
    ca_pem = None
    tmpdir = tempfile.mkdtemp(prefix='ccltune-sim-')
    if args.https:
        key, crt = make_cert(tmpdir)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(crt, key)
        httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True, do_handshake_on_connect=False)
        scheme = 'https'
        with open(crt, 'rb') as f:
            ca_pem = f.read()
        if args.ca_out:
            with open(args.ca_out, 'wb') as f:
                f.write(ca_pem)

    if args.node_agent:
        import nodeagent
        sim.agent = nodeagent.NodeAgent(sim.store, args, args.pod_dir or os.path.join(tmpdir, 'pods'))
        sim.agent.start()

    gc = threading.Thread(target=sim.store.gc_loop, args=(sim.stop,), daemon=True, name='gc')
    gc.start()

    def on_signal(signum, frame):
        sim.stop.set()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    srv = threading.Thread(target=httpd.serve_forever, kwargs={'poll_interval': 0.25}, daemon=True, name='http')
    srv.start()
    url = '%s://127.0.0.1:%d' % (scheme, sim.port)
    if args.kubeconfig_out:
        write_kubeconfig(args.kubeconfig_out, url, args.token or 'ccltune-sim-token', ca_pem)
    if args.port_file:
        tmp = args.port_file + '.tmp'
        with open(tmp, 'w') as f:
            f.write('%d\n' % sim.port)
        os.replace(tmp, args.port_file)
    sys.stderr.write('[sim] serving %s\n' % url)
    print('ready', flush=True)
    while not sim.stop.wait(0.5):
        pass
    sys.stderr.write('[sim] shutting down\n')
    if sim.agent:
        sim.agent.stop()
    httpd.shutdown()
    httpd.server_close()
    if not args.keep_pod_dirs:
        import shutil
        shutil.rmtree(tmpdir, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())

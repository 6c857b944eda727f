"""Mutating admission webhooks, as kube-apiserver 1.32 calls them on create.

For each MutatingWebhookConfiguration (by name) and each of its webhooks (in order) whose
rules match the request (operation, apiGroups, apiVersions, resources, scope) and whose
namespaceSelector (the namespace's labels) and objectSelector (the object's labels) select
it: POST an admission.k8s.io/v1 AdmissionReview to clientConfig.url over HTTPS, verifying the
server against clientConfig.caBundle (hostname included), within timeoutSeconds (default 10);
apply the RFC 6902 JSONPatch of the answer. A webhook that cannot be called, times out, or
answers something that is not a valid AdmissionReview fails: failurePolicy Fail (the default)
rejects the request (500, `failed calling webhook "NAME": ...`), Ignore goes on without it and
records an audit annotation `failed-open.mutation.webhook.admission.k8s.io/round_R_index_I`
(kept in `/_sim/state` under `admission`). A denial → the webhook's status code (default 400),
`admission webhook "NAME" denied the request: MSG`. Reinvocation: when a webhook's patch changed
the object after a webhook with reinvocationPolicy IfNeeded had seen it, those webhooks are
called once more, in order (a second round, as kube-apiserver). clientConfig.service cannot be
reached from the simulator: the call fails (use url). Only CREATE is admitted.
"""

import base64
import copy
import http.client
import json
import ssl
import threading
import time
import urllib.parse
import uuid

import k8spatch
import k8sselect
from k8sstore import ApiError

WEBHOOK_KEY = ('admissionregistration.k8s.io', 'mutatingwebhookconfigurations')


class CallError(Exception):
    pass


def _selector_match(sel, labels):
    """metav1.LabelSelector: matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist)."""
    if not sel:
        return True
    labels = labels or {}
    for k, v in (sel.get('matchLabels') or {}).items():
        if labels.get(k) != v:
            return False
    ops = {'In': 'in', 'NotIn': 'notin', 'Exists': 'exists', 'DoesNotExist': '!exists'}
    for e in sel.get('matchExpressions') or []:
        reqs = [(e.get('key'), ops.get(e.get('operator'), 'exists'), e.get('values') or [])]
        if not k8sselect.label_match(reqs, labels):
            return False
    return True


def _rule_match(rules, rt, version, namespaced):
    def has(lst, v):
        return '*' in (lst or []) or v in (lst or [])
    for r in rules or []:
        scope = r.get('scope', '*')
        if scope == 'Namespaced' and not namespaced or scope == 'Cluster' and namespaced:
            continue
        if has(r.get('operations'), 'CREATE') and has(r.get('apiGroups'), rt.group) and \
                has(r.get('apiVersions'), version) and has(r.get('resources'), rt.plural):
            return True
    return False


class Admission:
    def __init__(self, store):
        self.store = store
        self.lock = threading.Lock()
        self.contexts = {}      # caBundle -> ssl.SSLContext (built once: loading a CA costs)
        self.records = []       # fail-open audit annotations and call timings, newest last

    def _context(self, ca_bundle):
        with self.lock:
            ctx = self.contexts.get(ca_bundle)
            if ctx is None:
                ctx = ssl.create_default_context()
                if ca_bundle:
                    ctx.load_verify_locations(cadata=base64.b64decode(ca_bundle).decode())
                self.contexts[ca_bundle] = ctx
            return ctx

    def _record(self, entry):
        with self.lock:
            self.records.append(entry)
            del self.records[:-2000]

    def state(self):
        with self.lock:
            return list(self.records)

    def _hooks(self, rt, version, obj, ns):
        """(configuration name, webhook) of every webhook that must see this create, in order."""
        wrt = self.store.types.get(WEBHOOK_KEY)
        if wrt is None:
            return []
        configs, _ = self.store.list(wrt, None)
        ns_labels = None
        if ns:
            nso = self.store._lookup(self.store.types[('', 'namespaces')], None, ns)
            ns_labels = (nso or {}).get('metadata', {}).get('labels') or {}
        out = []
        for cfg in sorted(configs, key=lambda c: c['metadata']['name']):
            for hook in cfg.get('webhooks') or []:
                if not _rule_match(hook.get('rules'), rt, version, ns is not None):
                    continue
                if ns is not None and not _selector_match(hook.get('namespaceSelector'), ns_labels):
                    continue
                if not _selector_match(hook.get('objectSelector'), obj.get('metadata', {}).get('labels')):
                    continue
                out.append(hook)
        return out

    def _call(self, hook, review):
        cc = hook.get('clientConfig') or {}
        url = cc.get('url')
        if not url:
            raise CallError('clientConfig.service is not reachable from the simulator (set url)')
        u = urllib.parse.urlsplit(url)
        timeout = float(hook.get('timeoutSeconds') or 10)
        conn = http.client.HTTPSConnection(u.hostname, u.port or 443, timeout=timeout,
                                           context=self._context(cc.get('caBundle') or ''))
        body = json.dumps(review).encode()
        t0 = time.monotonic()
        try:
            conn.request('POST', (u.path or '/') + ('?' + u.query if u.query else ''), body=body,
                         headers={'Content-Type': 'application/json', 'Accept': 'application/json'})
            resp = conn.getresponse()
            data = resp.read()
        except (OSError, ssl.SSLError, http.client.HTTPException) as e:
            raise CallError('Post "%s": %s' % (url, e))
        finally:
            conn.close()
        ms = (time.monotonic() - t0) * 1000
        if resp.status != 200:
            raise CallError('Post "%s": HTTP %d: %s' % (url, resp.status, data[:200].decode(errors='replace')))
        try:
            out = json.loads(data)
        except ValueError as e:
            raise CallError('invalid AdmissionReview answer: %s' % e)
        r = out.get('response') if isinstance(out, dict) else None
        if out.get('apiVersion') != 'admission.k8s.io/v1' or out.get('kind') != 'AdmissionReview' or \
                not isinstance(r, dict):
            raise CallError('expected an admission.k8s.io/v1 AdmissionReview answer')
        if r.get('uid') != review['request']['uid']:
            raise CallError('expected response.uid="%s", got "%s"' % (review['request']['uid'], r.get('uid')))
        return r, ms

    def _review(self, rt, version, obj, ns, dry):
        gv = {'group': rt.group, 'version': version, 'kind': rt.kind}
        res = {'group': rt.group, 'version': version, 'resource': rt.plural}
        return {'apiVersion': 'admission.k8s.io/v1', 'kind': 'AdmissionReview',
                'request': {'uid': str(uuid.uuid4()), 'kind': gv, 'resource': res, 'requestKind': gv,
                            'requestResource': res, 'name': obj.get('metadata', {}).get('name', ''),
                            'namespace': ns or '', 'operation': 'CREATE',
                            'userInfo': {'username': 'ccltune-sim-user', 'groups': ['system:authenticated']},
                            'object': obj, 'oldObject': None, 'dryRun': bool(dry),
                            'options': {'apiVersion': 'meta.k8s.io/v1', 'kind': 'CreateOptions'}}}

    def _invoke(self, hook, rt, version, obj, ns, dry, round_, index):
        """The object after this webhook (unchanged when it fails open)."""
        name = hook.get('name', '')
        try:
            r, ms = self._call(hook, self._review(rt, version, obj, ns, dry))
        except CallError as e:
            if hook.get('failurePolicy', 'Fail') == 'Ignore':
                self._record({'annotation': 'failed-open.mutation.webhook.admission.k8s.io/round_%d_index_%d'
                              % (round_, index), 'webhook': name, 'error': str(e),
                              'namespace': ns, 'name': obj.get('metadata', {}).get('name', '')})
                return obj
            raise ApiError(500, 'InternalError', 'Internal error occurred: failed calling webhook "%s": %s' % (name, e))
        self._record({'webhook': name, 'ms': ms, 'round': round_})
        if not r.get('allowed'):
            st = r.get('status') or {}
            raise ApiError(int(st.get('code') or 400), st.get('reason') or 'BadRequest',
                           'admission webhook "%s" denied the request: %s' % (name, st.get('message', '')))
        if not r.get('patch'):
            return obj
        if r.get('patchType') != 'JSONPatch':
            raise ApiError(500, 'InternalError', 'Internal error occurred: webhook "%s": unsupported patchType %r'
                           % (name, r.get('patchType')))
        try:
            ops = json.loads(base64.b64decode(r['patch']))
            return k8spatch.json_patch(obj, ops)
        except (ValueError, k8spatch.PatchError) as e:
            raise ApiError(500, 'InternalError', 'Internal error occurred: webhook "%s": invalid patch: %s' % (name, e))

    def admit(self, rt, version, obj, ns, dry=False):
        """The object as the mutating webhooks leave it; raises ApiError as kube-apiserver answers."""
        hooks = self._hooks(rt, version, obj, ns)
        if not hooks:
            return obj
        after = []                      # the object as each webhook left it in round 0
        for i, hook in enumerate(hooks):
            obj = self._invoke(hook, rt, version, obj, ns, dry, 0, i)
            after.append(copy.deepcopy(obj))
        for i, hook in enumerate(hooks):
            # changed by a later webhook since this one answered
            if hook.get('reinvocationPolicy') == 'IfNeeded' and after[i] != obj:
                obj = self._invoke(hook, rt, version, obj, ns, dry, 1, i)
        return obj

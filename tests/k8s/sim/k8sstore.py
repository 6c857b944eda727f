"""The simulator's object store: one global resourceVersion, a bounded per-type event history,
watchers, finalizers, graceful pod deletion and an owner-reference garbage collector."""

import collections
import copy
import datetime
import queue
import re
import random
import string
import threading
import time
import uuid

import k8stypes
import k8sschema


CRD_KEY = ('apiextensions.k8s.io', 'customresourcedefinitions')
CRD_CLEANUP = 'customresourcecleanup.apiextensions.k8s.io'


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')


class ApiError(Exception):
    def __init__(self, code, reason, message, details=None, headers=None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}

    def status(self):
        st = {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Failure',
              'message': self.message, 'reason': self.reason, 'code': self.code}
        if self.details:
            st['details'] = self.details
        return st


def _details(rt, name):
    d = {'kind': rt.plural}
    if name:
        d['name'] = name
    if rt.group:
        d['group'] = rt.group
    return d


def not_found(rt, name):
    return ApiError(404, 'NotFound', '%s "%s" not found' % (rt.qualified, name), _details(rt, name))


def already_exists(rt, name):
    return ApiError(409, 'AlreadyExists', '%s "%s" already exists' % (rt.qualified, name), _details(rt, name))


def conflict(rt, name, why=None):
    why = why or ('the object has been modified; please apply your changes to the latest '
                  'version and try again')
    return ApiError(409, 'Conflict', 'Operation cannot be fulfilled on %s "%s": %s' % (rt.qualified, name, why),
                    _details(rt, name))


def invalid(rt, name, causes):
    """causes: list of (field, message)."""
    kind = rt.kind + ('.' + rt.group if rt.group else '')
    parts = ['%s: %s' % c if c[0] else c[1] for c in causes]
    msg = '%s "%s" is invalid: %s' % (kind, name, parts[0] if len(parts) == 1 else '[' + ', '.join(parts) + ']')
    d = _details(rt, name)
    d['kind'] = rt.kind
    d['causes'] = [{'reason': 'FieldValueInvalid', 'message': m, 'field': f} for f, m in causes]
    return ApiError(422, 'Invalid', msg, d)


def bad_request(msg):
    return ApiError(400, 'BadRequest', msg)


class Event:
    __slots__ = ('rv', 'type', 'key', 'obj', 'old')

    def __init__(self, rv, type_, key, obj, old):
        self.rv, self.type, self.key, self.obj, self.old = rv, type_, key, obj, old


class Watcher:
    def __init__(self, key, namespace):
        self.key = key
        self.namespace = namespace
        self.q = queue.Queue()
        self.closed = False

    def wants(self, ev):
        if ev.key != self.key:
            return False
        if self.namespace and ev.obj.get('metadata', {}).get('namespace') != self.namespace:
            return False
        return True


class Store:
    def __init__(self, history=1000):
        self.lock = threading.RLock()
        self.rv = 1
        self.types = {}                       # (group, plural) -> ResourceType
        self.objects = {}                     # (group, plural) -> {(ns, name): obj}
        self.uids = {}                        # uid -> ((group, plural), ns, name)
        # Per resource type, like kube-apiserver's watch cache: every event of type K with
        # rv > history_start[K] is in history[K]; older resourceVersions get 410 Expired.
        self.history = collections.defaultdict(collections.deque)
        self.history_max = history
        self.history_start = collections.defaultdict(lambda: self.compacted)
        self.compacted = 1
        self.watchers = set()
        self.gc_wakeup = threading.Event()
        self.on_change = []                   # callbacks(ev) run under the lock (node agent)
        self.graceful_pods = False            # set by the node agent: pods on nodes end gracefully
        self.type_listeners = []
        for rt in k8stypes.BUILTIN:
            self._add_type(rt)
        for ns in ('default', 'kube-system', 'kube-public', 'kube-node-lease'):
            self.create(self.types[('', 'namespaces')], None,
                        {'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': ns}})

    # ---- types -------------------------------------------------------------
    def _add_type(self, rt):
        self.types[rt.key] = rt
        self.objects.setdefault(rt.key, {})

    def type_for(self, group, version, plural):
        with self.lock:
            rt = self.types.get((group, plural))
            if rt and version in rt.versions:
                return rt
            return None

    def all_types(self):
        with self.lock:
            return list(self.types.values())

    def _sync_crd(self, crd, removed=False):
        spec = crd.get('spec', {})
        key = (spec.get('group'), spec.get('names', {}).get('plural'))
        if removed:
            self.types.pop(key, None)
            self.objects.pop(key, None)
            return
        rt = k8stypes.crd_to_type(crd)
        self.types[key] = rt
        self.objects.setdefault(key, {})

    # ---- helpers -----------------------------------------------------------
    def _next_rv(self):
        self.rv += 1
        return self.rv

    def _record(self, type_, rt, obj, old):
        ev = Event(self.rv, type_, rt.key, obj, old)
        h = self.history[rt.key]
        h.append(ev)
        while len(h) > self.history_max:
            dropped = h.popleft()
            self.history_start[rt.key] = dropped.rv
        for w in list(self.watchers):
            if w.wants(ev):
                w.q.put(ev)
        for cb in self.on_change:
            try:
                cb(ev)
            except Exception:   # pragma: no cover - a callback must not break the store
                import traceback
                traceback.print_exc()

    def _put(self, rt, obj, type_, old):
        md = obj['metadata']
        md['resourceVersion'] = str(self._next_rv())
        ns = md.get('namespace') if rt.namespaced else None
        self.objects[rt.key][(ns, md['name'])] = obj
        self.uids[md['uid']] = (rt.key, ns, md['name'])
        self._record(type_, rt, copy.deepcopy(obj), old)
        if rt.key == ('apiextensions.k8s.io', 'customresourcedefinitions'):
            self._sync_crd(obj)

    def _remove(self, rt, obj):
        md = obj['metadata']
        ns = md.get('namespace') if rt.namespaced else None
        old = self.objects[rt.key].pop((ns, md['name']), None)
        self.uids.pop(md.get('uid'), None)
        obj = copy.deepcopy(obj)
        obj['metadata']['resourceVersion'] = str(self._next_rv())
        self._record('DELETED', rt, obj, old)
        if rt.key == ('apiextensions.k8s.io', 'customresourcedefinitions'):
            crt = self.types.get((obj['spec'].get('group'), obj['spec'].get('names', {}).get('plural')))
            if crt:
                for o in list(self.objects.get(crt.key, {}).values()):
                    self._remove(crt, o)
            self._sync_crd(obj, removed=True)
        self.gc_wakeup.set()
        return obj

    def _lookup(self, rt, ns, name):
        return self.objects.get(rt.key, {}).get((ns if rt.namespaced else None, name))

    # ---- read --------------------------------------------------------------
    def get(self, rt, ns, name):
        with self.lock:
            o = self._lookup(rt, ns, name)
            if o is None:
                raise not_found(rt, name)
            return copy.deepcopy(o)

    def exists(self, rt, ns, name):
        with self.lock:
            return self._lookup(rt, ns, name) is not None

    def get_by_uid(self, uid):
        with self.lock:
            loc = self.uids.get(uid)
            if not loc:
                return None
            return copy.deepcopy(self.objects[loc[0]].get((loc[1], loc[2])))

    def list(self, rt, ns, pred=None):
        with self.lock:
            items = [o for (ons, _), o in sorted(self.objects.get(rt.key, {}).items(), key=lambda kv: (kv[0][0] or '', kv[0][1]))
                     if (not ns or ons == ns) and (pred is None or pred(o))]
            return copy.deepcopy(items), str(self.rv)

    # ---- write -------------------------------------------------------------
    def _check_namespace(self, rt, ns):
        if not rt.namespaced:
            return
        nsrt = self.types[('', 'namespaces')]
        nso = self._lookup(nsrt, None, ns)
        if nso is None:
            raise not_found(nsrt, ns)
        if nso['metadata'].get('deletionTimestamp'):
            raise ApiError(403, 'Forbidden', 'unable to create new content in namespace %s because it is being terminated' % ns,
                           _details(rt, None))

    def create(self, rt, ns, obj, dry_run=False, version=None, strict=False, warnings=None):
        with self.lock:
            obj = copy.deepcopy(obj)
            md = obj.setdefault('metadata', {})
            if not isinstance(md, dict):
                raise bad_request('metadata must be an object')
            if rt.namespaced:
                if md.get('namespace') and ns and md['namespace'] != ns:
                    raise bad_request('the namespace of the provided object does not match the namespace sent on the request')
                ns = ns or md.get('namespace') or 'default'
                md['namespace'] = ns
            else:
                md.pop('namespace', None)
            if not md.get('name'):
                if md.get('generateName'):
                    md['name'] = md['generateName'] + ''.join(random.choice(string.ascii_lowercase + string.digits) for _ in range(5))
                else:
                    raise invalid(rt, '', [('metadata.name', 'Required value: name or generateName is required')])
            name = md['name']
            if not k8stypes.NAME_RE.match(name) or len(name) > 253:
                raise invalid(rt, name, [('metadata.name', 'Invalid value: "%s": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character' % name)])
            self._check_namespace(rt, ns)
            if self._lookup(rt, ns, name) is not None:
                raise already_exists(rt, name)
            obj['apiVersion'] = rt.api_version(version)
            obj['kind'] = rt.kind
            for f in ('resourceVersion', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields', 'selfLink'):
                md.pop(f, None)
            md['uid'] = str(uuid.uuid4())
            md['creationTimestamp'] = now_iso()
            _validate_meta(rt, obj)
            self._prepare_create(rt, obj, version, strict, warnings)
            if dry_run:
                md['resourceVersion'] = str(self.rv)
                return obj
            self._put(rt, obj, 'ADDED', None)
            if rt.key == ('', 'namespaces') and 'serviceaccounts' in [k[1] for k in self.types]:
                sart = self.types[('', 'serviceaccounts')]
                if self._lookup(sart, name, 'default') is None:
                    self.create(sart, name, {'apiVersion': 'v1', 'kind': 'ServiceAccount', 'metadata': {'name': 'default'}})
            return copy.deepcopy(obj)

    def _prepare_create(self, rt, obj, version, strict, warnings):
        md = obj['metadata']
        if rt.crd is not None:
            if rt.crd.get('metadata', {}).get('deletionTimestamp'):
                raise ApiError(405, 'MethodNotAllowed', 'create not allowed while custom resource definition is terminating',
                               _details(rt, md['name']))
            md['generation'] = 1
            if rt.status:
                obj.pop('status', None)
            self._validate_cr(rt, obj, version, strict, warnings, None)
        elif rt.key == ('apiextensions.k8s.io', 'customresourcedefinitions'):
            md['generation'] = 1
            self._validate_crd(rt, obj)
        elif rt.key == ('', 'pods'):
            _default_pod(obj)
            self._admit_pod(rt, obj)
        elif rt.key == ('', 'namespaces'):
            obj['status'] = {'phase': 'Active'}
            obj.setdefault('spec', {}).setdefault('finalizers', ['kubernetes'])
        elif rt.key == ('apps', 'deployments'):
            md['generation'] = 1
        elif rt.key == ('', 'secrets'):
            obj.setdefault('type', 'Opaque')
            _fold_string_data(obj)

    def _admit_pod(self, rt, pod):
        spec = pod['spec']
        name = pod['metadata']['name']
        if not spec.get('containers'):
            raise invalid(rt, name, [('spec.containers', 'Required value')])
        pc = spec.get('priorityClassName')
        if pc:
            pco = self._lookup(self.types[('scheduling.k8s.io', 'priorityclasses')], None, pc)
            if pco is None and pc not in ('system-cluster-critical', 'system-node-critical'):
                raise ApiError(403, 'Forbidden', 'pods "%s" is forbidden: no PriorityClass with name %s was found' % (name, pc),
                               _details(rt, name))
            spec['priority'] = pco.get('value', 0) if pco else 2000000000
        sa = spec.get('serviceAccountName')
        if sa and self._lookup(self.types[('', 'serviceaccounts')], pod['metadata']['namespace'], sa) is None:
            raise ApiError(403, 'Forbidden', 'pods "%s" is forbidden: error looking up service account %s/%s: serviceaccount "%s" not found'
                           % (name, pod['metadata']['namespace'], sa, sa), _details(rt, name))

    def _validate_crd(self, rt, crd):
        spec = crd.get('spec') or {}
        names = spec.get('names') or {}
        name = crd['metadata']['name']
        causes = []
        for f in ('plural', 'kind'):
            if not names.get(f):
                causes.append(('spec.names.%s' % f, 'Required value'))
        if not spec.get('group'):
            causes.append(('spec.group', 'Required value'))
        if not spec.get('versions'):
            causes.append(('spec.versions', 'Required value'))
        elif sum(1 for v in spec['versions'] if v.get('storage')) != 1:
            causes.append(('spec.versions', 'Invalid value: must have exactly one version marked as storage version'))
        if names.get('plural') and spec.get('group') and name != '%s.%s' % (names['plural'], spec['group']):
            causes.append(('metadata.name', 'Invalid value: "%s": must be spec.names.plural+"."+spec.group' % name))
        if spec.get('scope') not in ('Namespaced', 'Cluster'):
            causes.append(('spec.scope', 'Unsupported value: "%s": supported values: "Cluster", "Namespaced"' % spec.get('scope')))
        if causes:
            raise invalid(rt, name, causes)
        names = dict(names)
        names.setdefault('singular', names['kind'].lower())
        names.setdefault('listKind', names['kind'] + 'List')
        spec['names'] = names
        for v in spec['versions']:
            v.setdefault('served', True)
        spec.setdefault('conversion', {'strategy': 'None'})
        ts = now_iso()
        crd['status'] = {
            'acceptedNames': names,
            'storedVersions': [v['name'] for v in spec['versions'] if v.get('storage')],
            'conditions': [
                {'type': 'NamesAccepted', 'status': 'True', 'reason': 'NoConflicts',
                 'message': 'no conflicts found', 'lastTransitionTime': ts},
                {'type': 'Established', 'status': 'True', 'reason': 'InitialNamesAccepted',
                 'message': 'the initial names have been accepted', 'lastTransitionTime': ts}]}
        other = self.types.get((spec['group'], names['plural']))
        if other is not None and other.crd is None:
            raise invalid(rt, name, [('spec.names.plural', 'Invalid value: collides with a built-in resource')])

    def _validate_cr(self, rt, obj, version, strict, warnings, old):
        schema = rt.schema(version or rt.storage_version)
        if not schema:
            return
        errs, unknown = k8sschema.validate(obj, schema, rt.crd_version(version or rt.storage_version), old)
        if unknown:
            if strict:
                raise bad_request('%s in version "%s" cannot be handled as a %s: strict decoding error: %s' % (
                    rt.kind, version or rt.storage_version, rt.kind,
                    ', '.join('unknown field "%s"' % u for u in unknown)))
            if warnings is not None:
                warnings.extend('unknown field "%s"' % u for u in unknown)
        if errs:
            raise invalid(rt, obj['metadata']['name'], errs)

    def update(self, rt, ns, name, obj, subresource=None, dry_run=False, version=None, strict=False,
               warnings=None, allow_create=False):
        with self.lock:
            if not isinstance(obj, dict) or not isinstance(obj.get('metadata', {}), dict):
                raise bad_request('the body of the request was in an unknown format')
            obj = copy.deepcopy(obj)
            md = obj.setdefault('metadata', {})
            if md.get('name') and md['name'] != name:
                raise bad_request('the name of the object (%s) does not match the name on the URL (%s)' % (md['name'], name))
            if rt.namespaced and md.get('namespace') and md['namespace'] != ns:
                raise bad_request('the namespace of the provided object does not match the namespace sent on the request')
            cur = self._lookup(rt, ns, name)
            if cur is None:
                if allow_create and not subresource:
                    md['name'] = name
                    return self.create(rt, ns, obj, dry_run=dry_run, version=version, strict=strict, warnings=warnings)
                raise not_found(rt, name)
            rv = md.get('resourceVersion')
            if rv and rv != cur['metadata']['resourceVersion']:
                raise conflict(rt, name)
            if not rv and not _unconditional_ok(rt):
                raise ApiError(422, 'Invalid', '%s "%s" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be '
                               'specified for an update' % (rt.qualified, name),
                               {'name': name, 'group': rt.group, 'kind': rt.plural,
                                'causes': [{'reason': 'FieldValueInvalid', 'field': 'metadata.resourceVersion',
                                            'message': 'Invalid value: 0x0: must be specified for an update'}]})
            new = self._merge_update(rt, cur, obj, subresource, version, strict, warnings)
            _validate_meta(rt, new)
            if new == cur:
                return copy.deepcopy(cur)        # no-op updates do not bump resourceVersion
            if dry_run:
                return new
            return self._commit_update(rt, cur, new)

    def _commit_update(self, rt, cur, new):
        md = new['metadata']
        if md.get('deletionTimestamp') and not md.get('finalizers') and not self._graceful_pending(rt, new):
            return self._remove(rt, new)
        self._put(rt, new, 'MODIFIED', copy.deepcopy(cur))
        return copy.deepcopy(new)

    def _graceful_pending(self, rt, obj):
        """A pod being deleted gracefully stays until its kubelet (node agent) confirms."""
        return (rt.key == ('', 'pods') and self.graceful_pods and obj['metadata'].get('deletionGracePeriodSeconds', 0) > 0)

    def _merge_update(self, rt, cur, obj, subresource, version, strict, warnings):
        cmd = cur['metadata']
        if subresource == 'status':
            new = copy.deepcopy(cur)
            if 'status' in obj:
                new['status'] = copy.deepcopy(obj['status'])
            else:
                new.pop('status', None)
            if rt.crd is not None:
                self._validate_cr(rt, new, version, strict, warnings, cur)
            return new
        new = obj
        md = new['metadata']
        new['apiVersion'] = cur['apiVersion']
        new['kind'] = cur['kind']
        for f in ('uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'namespace', 'name',
                  'generateName'):
            if f in cmd:
                md[f] = cmd[f]
            else:
                md.pop(f, None)
        md['resourceVersion'] = cmd['resourceVersion']
        md.pop('managedFields', None)
        if cmd.get('deletionTimestamp'):
            added = set(md.get('finalizers') or []) - set(cmd.get('finalizers') or [])
            if added:
                raise invalid(rt, cmd['name'], [('metadata.finalizers', 'Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers %s' % sorted(added))])
        if rt.status:
            if 'status' in cur:
                new['status'] = copy.deepcopy(cur['status'])
            else:
                new.pop('status', None)
        if rt.key == ('', 'pods'):
            _check_pod_update(rt, cur, new)
        if rt.key == ('', 'secrets'):
            _fold_string_data(new)
        if rt.crd is not None:
            self._validate_cr(rt, new, version, strict, warnings, cur)
        if rt.key == ('apiextensions.k8s.io', 'customresourcedefinitions'):
            self._validate_crd(rt, new)
            if new.get('status', {}).get('conditions') and cur.get('status', {}).get('conditions'):
                new['status']['conditions'] = cur['status']['conditions']
        if 'generation' in cmd:
            def strip(o):
                return {k: v for k, v in o.items() if k not in ('metadata', 'status', 'apiVersion', 'kind')}
            changed = strip(new) != strip(cur) or (not rt.status and new.get('status') != cur.get('status'))
            md['generation'] = cmd['generation'] + (1 if changed else 0)
        return new

    def mutate(self, rt, ns, name, fn, uid=None):
        """Apply fn(obj) to a copy of the stored object and commit it (scheduler binding, kubelet status).
        Returns the new object, or None when the object is gone (or has another uid)."""
        with self.lock:
            cur = self._lookup(rt, ns, name)
            if cur is None or (uid and cur['metadata'].get('uid') != uid):
                return None
            new = copy.deepcopy(cur)
            if fn(new) is False or new == cur:
                return copy.deepcopy(cur)
            new['metadata']['resourceVersion'] = cur['metadata']['resourceVersion']
            return self._commit_update(rt, cur, new)

    def remove_now(self, rt, ns, name, uid=None):
        """The kubelet's final delete of a terminated pod (grace period 0)."""
        with self.lock:
            cur = self._lookup(rt, ns, name)
            if cur is None or (uid and cur['metadata'].get('uid') != uid):
                return None
            if cur['metadata'].get('finalizers'):
                new = copy.deepcopy(cur)
                new['metadata']['deletionGracePeriodSeconds'] = 0
                self._put(rt, new, 'MODIFIED', copy.deepcopy(cur))
                return new
            return self._remove(rt, copy.deepcopy(cur))

    def delete(self, rt, ns, name, opts=None, dry_run=False):
        opts = opts or {}
        with self.lock:
            cur = self._lookup(rt, ns, name)
            if cur is None:
                raise not_found(rt, name)
            pre = opts.get('preconditions') or {}
            if pre.get('uid') and pre['uid'] != cur['metadata']['uid']:
                raise conflict(rt, name, 'Precondition failed: UID in precondition: %s, UID in object meta: %s' % (pre['uid'], cur['metadata']['uid']))
            if pre.get('resourceVersion') and pre['resourceVersion'] != cur['metadata']['resourceVersion']:
                raise conflict(rt, name, 'Precondition failed: ResourceVersion in precondition: %s, ResourceVersion in object meta: %s' % (pre['resourceVersion'], cur['metadata']['resourceVersion']))
            if dry_run:
                return copy.deepcopy(cur)
            policy = opts.get('propagationPolicy')
            if not policy:
                policy = 'Orphan' if opts.get('orphanDependents') else 'Background'
            new = copy.deepcopy(cur)
            md = new['metadata']
            fins = list(md.get('finalizers') or [])
            if policy == 'Orphan':
                self._orphan(cur['metadata']['uid'])
            elif policy == 'Foreground' and not md.get('deletionTimestamp') and self._dependents(md['uid']):
                fins.append('foregroundDeletion')
            is_crd = rt.key == CRD_KEY
            if is_crd and not md.get('deletionTimestamp'):
                fins.append(CRD_CLEANUP)        # objects go first, then the CRD
            grace = opts.get('gracePeriodSeconds')
            if rt.key == ('', 'pods'):
                if grace is None:
                    grace = cur.get('spec', {}).get('terminationGracePeriodSeconds', 30)
                if (not self.graceful_pods or not cur.get('spec', {}).get('nodeName')
                        or cur.get('status', {}).get('phase') in ('Succeeded', 'Failed')):
                    grace = 0
            else:
                grace = 0
            if fins or grace:
                if md.get('deletionTimestamp'):
                    if grace == 0 and not fins and rt.key == ('', 'pods'):
                        return self._remove(rt, new)    # force delete of a terminating pod
                    return copy.deepcopy(cur)
                md['deletionTimestamp'] = now_iso()
                md['deletionGracePeriodSeconds'] = int(grace or 0)
                if 'generation' in md:
                    md['generation'] += 1          # as kube-apiserver's BeforeDelete does
                md['finalizers'] = fins
                if not fins:
                    md.pop('finalizers')
                self._put(rt, new, 'MODIFIED', copy.deepcopy(cur))
                if is_crd:
                    self._delete_custom_objects(new)
                self.gc_wakeup.set()
                return copy.deepcopy(new)
            if rt.key == ('', 'namespaces'):
                md['deletionTimestamp'] = now_iso()
                md['deletionGracePeriodSeconds'] = 0
                new['status'] = {'phase': 'Terminating'}
                self._put(rt, new, 'MODIFIED', copy.deepcopy(cur))
                self._empty_namespace(name)
                self.gc_wakeup.set()
                return copy.deepcopy(new)
            return self._remove(rt, new)

    def _crd_type(self, crd):
        spec = crd.get('spec', {})
        return self.types.get((spec.get('group'), spec.get('names', {}).get('plural')))

    def _delete_custom_objects(self, crd):
        crt = self._crd_type(crd)
        if crt is None:
            return
        for (ns, name), o in list(self.objects.get(crt.key, {}).items()):
            if not o['metadata'].get('deletionTimestamp'):
                try:
                    self.delete(crt, ns, name, {})
                except ApiError:
                    pass

    def _empty_namespace(self, ns):
        for key, objs in list(self.objects.items()):
            rt = self.types.get(key)
            if not rt or not rt.namespaced:
                continue
            for (ons, name), o in list(objs.items()):
                if ons == ns and not o['metadata'].get('deletionTimestamp'):
                    try:
                        self.delete(rt, ns, name, {'gracePeriodSeconds': 0} if key == ('', 'pods') else {})
                    except ApiError:
                        pass

    def _dependents(self, uid):
        out = []
        for key, objs in self.objects.items():
            for o in objs.values():
                for ref in o['metadata'].get('ownerReferences') or []:
                    if ref.get('uid') == uid:
                        out.append((key, o, ref))
        return out

    def _orphan(self, uid):
        for key, o, _ in self._dependents(uid):
            new = copy.deepcopy(o)
            new['metadata']['ownerReferences'] = [r for r in o['metadata']['ownerReferences'] if r.get('uid') != uid]
            if not new['metadata']['ownerReferences']:
                del new['metadata']['ownerReferences']
            self._put(self.types[key], new, 'MODIFIED', copy.deepcopy(o))

    # ---- garbage collector -------------------------------------------------
    def gc_once(self):
        with self.lock:
            for key, objs in list(self.objects.items()):
                rt = self.types.get(key)
                if rt is None:
                    continue
                for (ns, name), o in list(objs.items()):
                    md = o['metadata']
                    refs = md.get('ownerReferences') or []
                    if refs and not md.get('deletionTimestamp'):
                        owners = [self.uids.get(r.get('uid')) for r in refs]
                        live = [loc for loc in owners if loc]
                        fg = False
                        for loc in live:
                            ow = self.objects[loc[0]].get((loc[1], loc[2]))
                            if ow and ow['metadata'].get('deletionTimestamp') and 'foregroundDeletion' in (ow['metadata'].get('finalizers') or []):
                                fg = True
                        if not live or fg:
                            try:
                                self.delete(rt, ns, name, {'propagationPolicy': 'Foreground' if fg else 'Background'})
                            except ApiError:
                                pass
                            continue
                    fins = md.get('finalizers') or []
                    if md.get('deletionTimestamp') and 'foregroundDeletion' in fins:
                        blocking = [d for d in self._dependents(md['uid']) if d[2].get('blockOwnerDeletion')]
                        if not blocking:
                            new = copy.deepcopy(o)
                            new['metadata']['finalizers'] = [f for f in fins if f != 'foregroundDeletion']
                            self._commit_update(rt, o, new)
            crdrt = self.types[CRD_KEY]
            for (_, name), o in list(self.objects[CRD_KEY].items()):
                fins = o['metadata'].get('finalizers') or []
                if o['metadata'].get('deletionTimestamp') and CRD_CLEANUP in fins:
                    crt = self._crd_type(o)
                    if crt is None or not self.objects.get(crt.key):
                        new = copy.deepcopy(o)
                        new['metadata']['finalizers'] = [f for f in fins if f != CRD_CLEANUP]
                        self._commit_update(crdrt, o, new)
                    else:
                        self._delete_custom_objects(o)
            nsrt = self.types[('', 'namespaces')]
            for (_, name), o in list(self.objects[nsrt.key].items()):
                if o['metadata'].get('deletionTimestamp'):
                    self._empty_namespace(name)
                    busy = any(ons == name for key, objs in self.objects.items()
                               if self.types.get(key) and self.types[key].namespaced for (ons, _) in objs)
                    if not busy:
                        self._remove(nsrt, o)

    def gc_loop(self, stop):
        while not stop.is_set():
            self.gc_wakeup.wait(2.0)
            self.gc_wakeup.clear()
            time.sleep(0.05)
            self.gc_once()

    # ---- watch -------------------------------------------------------------
    def watch(self, rt, ns, rv):
        """Returns (watcher, initial events). rv None/''/'0': synthetic ADDED for what exists."""
        with self.lock:
            w = Watcher(rt.key, ns)
            if rv in (None, '', '0'):
                items = [o for (ons, _), o in sorted(self.objects.get(rt.key, {}).items(), key=lambda kv: (kv[0][0] or '', kv[0][1]))
                         if not ns or ons == ns]
                initial = [Event(int(o['metadata']['resourceVersion']), 'ADDED', rt.key, copy.deepcopy(o), None) for o in items]
            else:
                try:
                    r = int(rv)
                except ValueError:
                    raise bad_request('invalid resource version "%s"' % rv)
                start = self.history_start[rt.key]
                if r < start:
                    raise ApiError(410, 'Expired', 'too old resource version: %d (%d)' % (r, start + 1))
                initial = [ev for ev in self.history[rt.key] if ev.rv > r and w.wants(ev)]
            self.watchers.add(w)
            return w, initial

    def unwatch(self, w):
        with self.lock:
            self.watchers.discard(w)
            w.closed = True

    def close_watches(self):
        with self.lock:
            for w in list(self.watchers):
                w.q.put(None)

    def compact(self):
        with self.lock:
            self.history.clear()
            self.history_start.clear()
            self.compacted = self.rv
            return self.rv

    def check_rv_fresh(self, rv):
        """Lists with a continue token or an old exact resourceVersion after compaction."""
        with self.lock:
            if int(rv) < self.compacted:
                raise ApiError(410, 'Expired', 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.')


_LABEL_NAME = re.compile(r'^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$')
_LABEL_VALUE = re.compile(r'^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$')


def _qualified_name_errors(key, path):
    errs = []
    prefix, _, name = key.rpartition('/')
    if prefix and (len(prefix) > 253 or not k8stypes.NAME_RE.match(prefix)):
        errs.append((path, 'Invalid value: "%s": prefix part a lowercase RFC 1123 subdomain must consist of lower case '
                           'alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character' % key))
    if not name or len(name) > 63 or not _LABEL_NAME.match(name):
        errs.append((path, 'Invalid value: "%s": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', '
                           'and must start and end with an alphanumeric character (and be at most 63 characters)' % key))
    return errs


def _validate_meta(rt, obj):
    """Label/annotation rules of ObjectMeta validation (422 Invalid, as kube-apiserver)."""
    md = obj.get('metadata') or {}
    errs = []
    labels = md.get('labels') or {}
    if not isinstance(labels, dict):
        errs.append(('metadata.labels', 'Invalid value: must be a map of strings'))
        labels = {}
    for k, v in labels.items():
        errs += _qualified_name_errors(k, 'metadata.labels')
        v = '' if v is None else v
        if not isinstance(v, str):
            errs.append(('metadata.labels', 'Invalid value: label values must be strings'))
        elif len(v) > 63:
            errs.append(('metadata.labels', 'Invalid value: "%s": must be no more than 63 characters' % v))
        elif not _LABEL_VALUE.match(v):
            errs.append(('metadata.labels', 'Invalid value: "%s": a valid label must be an empty string or consist of '
                                            'alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an '
                                            'alphanumeric character' % v))
    ann = md.get('annotations') or {}
    size = 0
    for k, v in (ann.items() if isinstance(ann, dict) else []):
        errs += _qualified_name_errors(k.lower(), 'metadata.annotations')
        size += len(k) + len(v or '')
    if size > 256 * 1024:
        errs.append(('metadata.annotations', 'Too long: must have at most 262144 bytes'))
    if errs:
        raise invalid(rt, md.get('name', ''), errs)


def _unconditional_ok(rt):
    """kube-apiserver's AllowUnconditionalUpdate: false for custom resources, CRDs and leases."""
    return rt.crd is None and rt.key not in (('apiextensions.k8s.io', 'customresourcedefinitions'),
                                             ('coordination.k8s.io', 'leases'))


# ---- pods ------------------------------------------------------------------
def _default_pod(pod):
    spec = pod.setdefault('spec', {})
    spec.setdefault('restartPolicy', 'Always')
    spec.setdefault('schedulerName', 'default-scheduler')
    spec.setdefault('terminationGracePeriodSeconds', 30)
    spec.setdefault('dnsPolicy', 'ClusterFirst')
    spec.setdefault('serviceAccountName', spec.get('serviceAccount') or 'default')
    spec.setdefault('securityContext', {})
    spec.setdefault('enableServiceLinks', True)
    spec.setdefault('priority', 0)
    for c in spec.get('containers') or []:
        c.setdefault('terminationMessagePath', '/dev/termination-log')
        c.setdefault('terminationMessagePolicy', 'File')
        img = c.get('image', '')
        c.setdefault('imagePullPolicy', 'Always' if (':' not in img.split('/')[-1] or img.endswith(':latest')) else 'IfNotPresent')
        c.setdefault('resources', {})
    pod['status'] = {'phase': 'Pending', 'qosClass': 'BestEffort'}


def _fold_string_data(secret):
    import base64
    sd = secret.pop('stringData', None)
    if isinstance(sd, dict):
        data = secret.setdefault('data', {})
        for k, v in sd.items():
            data[k] = base64.b64encode(str(v).encode()).decode()


def _check_pod_update(rt, cur, new):
    a, b = copy.deepcopy(cur.get('spec', {})), copy.deepcopy(new.get('spec', {}))
    for s in (a, b):
        for c in s.get('containers') or []:
            c.pop('image', None)
        s.pop('activeDeadlineSeconds', None)
        s.pop('tolerations', None)
    if a != b:
        raise invalid(rt, cur['metadata']['name'], [('spec', 'Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)')])

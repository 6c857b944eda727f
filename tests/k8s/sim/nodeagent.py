"""Node agent: scheduler + kubelet for fake nodes, running each scheduled pod's first
container as a real local process. See README.md for the contract with the controller."""

import base64
import os
import re
import shutil
import signal
import subprocess
import threading
import time

import k8sstore

try:   # pod processes die with the simulator even when it is SIGKILLed (PR_SET_PDEATHSIG)
    import ctypes
    _prctl = ctypes.CDLL(None, use_errno=True).prctl
    _prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]

    def _child_setup():
        _prctl(1, 9, 0, 0, 0)     # PR_SET_PDEATHSIG, SIGKILL
except (OSError, AttributeError):   # pragma: no cover
    _child_setup = None

POD = ('', 'pods')
NODE = ('', 'nodes')

# The kubelet's bounds on a termination message (pkg/kubelet/container: MaxContainerTermination
# MessageLength, ...LogLength, ...LogLines).
TERMINATION_MESSAGE_MAX = 4096
TERMINATION_LOG_TAIL_BYTES = 2048
TERMINATION_LOG_TAIL_LINES = 80

_Q = re.compile(r'^([+-]?[0-9.]+(?:[eE][+-]?\d+)?)([a-zA-Z]*)$')
_SUFFIX = {'': 1, 'n': 1e-9, 'u': 1e-6, 'm': 1e-3, 'k': 1e3, 'M': 1e6, 'G': 1e9, 'T': 1e12, 'P': 1e15, 'E': 1e18,
           'Ki': 2 ** 10, 'Mi': 2 ** 20, 'Gi': 2 ** 30, 'Ti': 2 ** 40, 'Pi': 2 ** 50, 'Ei': 2 ** 60}


def quantity(q):
    m = _Q.match(str(q).strip())
    if not m or m.group(2) not in _SUFFIX:
        return 0.0
    return float(m.group(1)) * _SUFFIX[m.group(2)]


def _match_expr(labels, e):
    k, op, vals = e.get('key'), e.get('operator'), e.get('values') or []
    has = k in labels
    if op == 'In':
        return has and labels[k] in vals
    if op == 'NotIn':
        return not has or labels[k] not in vals
    if op == 'Exists':
        return has
    if op == 'DoesNotExist':
        return not has
    if op in ('Gt', 'Lt') and has and vals:
        try:
            a, b = int(labels[k]), int(vals[0])
        except ValueError:
            return False
        return a > b if op == 'Gt' else a < b
    return False


def _env_expand(s, env):
    return re.sub(r'\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)', lambda m: env.get(m.group(1), m.group(0)), s).replace('$$', '$')


class ConfigError(Exception):
    pass


class Proc:
    def __init__(self, pod, popen, log, started, dirname):
        self.uid = pod['metadata']['uid']
        self.ns = pod['metadata']['namespace']
        self.name = pod['metadata']['name']
        self.popen = popen
        self.log = log
        self.started = started
        self.dir = dirname
        self.term_sent = None
        self.killed = False
        self.deadline_exceeded = False
        self.reported = False


class NodeAgent:
    def __init__(self, store, args, pod_dir):
        self.store = store
        self.args = args
        self.pod_dir = pod_dir
        os.makedirs(pod_dir, exist_ok=True)
        names = [n for n in (args.node_names or '').split(',') if n] or ['node-%d' % i for i in range(args.nodes)]
        self.nodes = names
        self.schedulers = set(s for s in args.schedulers.split(',') if s)
        self.bin = args.ccltune_bin
        self.procs = {}           # uid -> Proc
        self.dirs = {}            # uid -> pod dir
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.thread = None
        self.unschedulable_noted = {}
        self.busy = False
        self.retry = False

    # ---- set-up ----------------------------------------------------------------
    def start(self):
        rt = self.store.types[NODE]
        extra = dict(kv.split('=', 1) for kv in (self.args.node_labels or '').split(',') if '=' in kv)
        for n in self.nodes:
            cap = {'cpu': str(self.args.node_cpu), 'memory': str(self.args.node_memory), 'pods': str(self.args.node_pods),
                   'ephemeral-storage': '100Gi'}
            for r in getattr(self.args, 'node_resources', '').split(','):
                if '=' in r:
                    k, v = r.split('=', 1)
                    cap[k] = v
            now = k8sstore.now_iso()
            node = {'apiVersion': 'v1', 'kind': 'Node',
                    'metadata': {'name': n, 'labels': dict({'kubernetes.io/hostname': n, 'kubernetes.io/os': 'linux',
                                                            'kubernetes.io/arch': 'amd64'}, **extra)},
                    'spec': {},
                    'status': {'capacity': cap, 'allocatable': dict(cap),
                               'conditions': [{'type': 'Ready', 'status': 'True', 'reason': 'KubeletReady',
                                               'message': 'kubelet is posting ready status (ccltune simulator)',
                                               'lastHeartbeatTime': now, 'lastTransitionTime': now}],
                               'addresses': [{'type': 'InternalIP', 'address': '127.0.0.1'}, {'type': 'Hostname', 'address': n}],
                               'nodeInfo': {'kubeletVersion': 'v1.32.0', 'operatingSystem': 'linux', 'architecture': 'amd64',
                                            'containerRuntimeVersion': 'ccltune-sim://1'}}}
            try:
                created = self.store.create(rt, None, node)
                self.store.mutate(rt, None, n, lambda o: o.__setitem__('status', node['status']))
            except k8sstore.ApiError:
                created = None
            del created
        self.store.graceful_pods = True
        self.store.on_change.append(self._on_change)
        self.thread = threading.Thread(target=self._loop, daemon=True, name='node-agent')
        self.thread.start()

    def _on_change(self, ev):
        if ev.key in (POD, NODE):
            self.wake.set()

    def stop(self):
        self.stopping.set()
        self.wake.set()
        with self.lock:
            procs = list(self.procs.values())
        for p in procs:
            self._signal(p, signal.SIGTERM)
        t0 = time.monotonic()
        for p in procs:
            try:
                p.popen.wait(timeout=max(0.1, 3 - (time.monotonic() - t0)))
            except subprocess.TimeoutExpired:
                self._signal(p, signal.SIGKILL)
        for p in procs:
            try:
                p.popen.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        if self.thread:
            self.thread.join(timeout=3)

    # ---- queries from the API server -----------------------------------------------
    def log_path(self, pod):
        d = self.dirs.get(pod['metadata'].get('uid'))
        return os.path.join(d, 'log') if d else None

    def is_running(self, pod):
        p = self.procs.get(pod['metadata'].get('uid'))
        return p is not None and p.popen.poll() is None

    def processes(self):
        with self.lock:
            return [{'namespace': p.ns, 'name': p.name, 'uid': p.uid, 'pid': p.popen.pid,
                     'running': p.popen.poll() is None} for p in self.procs.values()]

    def kill(self, ns, name, sig):
        """Signal a pod's process (not its group), as `kill -SIG pid` from a test would."""
        with self.lock:
            for p in self.procs.values():
                if p.ns == ns and p.name == name and p.popen.poll() is None:
                    os.kill(p.popen.pid, sig)
                    return p.popen.pid
        return None

    # ---- the loop ----------------------------------------------------------------
    def _loop(self):
        while not self.stopping.is_set():
            self.wake.wait(0.25 if self.busy else 1.0)
            time.sleep(0.02)          # coalesce bursts of events into one pass
            self.wake.clear()
            if self.stopping.is_set():
                break
            try:
                self._sync()
            except Exception:
                import traceback
                traceback.print_exc()

    def _sync(self):
        rt = self.store.types[POD]
        pods, _ = self.store.list(rt, None)
        nodes, _ = self.store.list(self.store.types[NODE], None)
        nodes = [n for n in nodes if n['metadata']['name'] in self.nodes]
        live = {p['metadata']['uid']: p for p in pods}
        # processes whose pod vanished (force delete): kill and forget
        with self.lock:
            gone = [p for uid, p in self.procs.items() if uid not in live]
        for p in gone:
            if p.popen.poll() is None:
                self._signal(p, signal.SIGKILL)
                try:
                    p.popen.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    pass
            self._forget(p.uid)
        for uid in [u for u in self.dirs if u not in live and u not in self.procs]:
            self._forget(uid)
        usage = {n['metadata']['name']: {} for n in nodes}
        for p in pods:
            nn = p.get('spec', {}).get('nodeName')
            if nn in usage and p.get('status', {}).get('phase') not in ('Succeeded', 'Failed'):
                u = usage[nn]
                u['pods'] = u.get('pods', 0) + 1
                for r, v in self._requests(p).items():
                    u[r] = u.get(r, 0) + v
        for p in pods:
            md, spec, st = p['metadata'], p.get('spec', {}), p.get('status', {})
            uid = md['uid']
            if not spec.get('nodeName'):
                if not md.get('deletionTimestamp'):
                    self._schedule(rt, p, nodes, usage)
                continue
            if spec['nodeName'] not in self.nodes:
                continue
            proc = self.procs.get(uid)
            if md.get('deletionTimestamp'):
                self._terminate(rt, p, proc)
                continue
            if proc is None:
                if st.get('phase') == 'Pending':
                    self._start(rt, p)
                continue
            rc = proc.popen.poll()
            if rc is None:
                ads = spec.get('activeDeadlineSeconds')
                if ads and time.time() - proc.started > ads and not proc.deadline_exceeded:
                    proc.deadline_exceeded = True
                    self._signal(proc, signal.SIGKILL)
                continue
            if not proc.reported:
                self._report_exit(rt, p, proc, rc)
        with self.lock:
            self.busy = any(p.popen.poll() is None or not p.reported for p in self.procs.values())
        self.busy = self.busy or bool(self.retry)
        self.retry = False

    def _event(self, pod, type_, reason, message, component, node=None):
        """A core/v1 Event about the pod, as kube-scheduler and the kubelet record them."""
        md = pod['metadata']
        now = k8sstore.now_iso()
        ev = {'apiVersion': 'v1', 'kind': 'Event',
              'metadata': {'name': '%s.%x' % (md['name'], time.time_ns()), 'namespace': md['namespace']},
              'involvedObject': {'apiVersion': 'v1', 'kind': 'Pod', 'name': md['name'], 'namespace': md['namespace'],
                                 'uid': md['uid'], 'resourceVersion': md.get('resourceVersion', '')},
              'reason': reason, 'message': message, 'type': type_, 'count': 1,
              'source': dict({'component': component}, **({'host': node} if node else {})),
              'firstTimestamp': now, 'lastTimestamp': now, 'reportingComponent': component,
              'reportingInstance': node or component}
        if component == 'kubelet':
            ev['involvedObject']['fieldPath'] = 'spec.containers{%s}' % (pod['spec'].get('containers') or [{}])[0].get('name', '')
        try:
            self.store.create(self.store.types[('', 'events')], md['namespace'], ev)
        except k8sstore.ApiError:
            pass

    # ---- scheduling ----------------------------------------------------------------
    def _requests(self, pod):
        out = {}
        for c in pod.get('spec', {}).get('containers') or []:
            res = c.get('resources') or {}
            req = dict(res.get('limits') or {})
            req.update(res.get('requests') or {})
            for k, v in req.items():
                out[k] = out.get(k, 0) + quantity(v)
        return out

    def _fits(self, pod, node, usage):
        labels = node['metadata'].get('labels') or {}
        spec = pod.get('spec', {})
        for k, v in (spec.get('nodeSelector') or {}).items():
            if labels.get(k) != v:
                return 'node(s) didn\'t match Pod\'s node affinity/selector'
        req = (((spec.get('affinity') or {}).get('nodeAffinity') or {})
               .get('requiredDuringSchedulingIgnoredDuringExecution') or {})
        terms = req.get('nodeSelectorTerms') or []
        if terms and not any(all(_match_expr(labels, e) for e in t.get('matchExpressions') or []) for t in terms):
            return 'node(s) didn\'t match Pod\'s node affinity/selector'
        for taint in node.get('spec', {}).get('taints') or []:
            if taint.get('effect') in ('NoSchedule', 'NoExecute') and not any(
                    (t.get('operator') == 'Exists' and (not t.get('key') or t.get('key') == taint.get('key'))) or
                    (t.get('key') == taint.get('key') and t.get('value', '') == taint.get('value', ''))
                    for t in spec.get('tolerations') or []):
                return 'node(s) had untolerated taint {%s: %s}' % (taint.get('key'), taint.get('value', ''))
        alloc = node.get('status', {}).get('allocatable') or {}
        used = usage.get(node['metadata']['name'], {})
        if used.get('pods', 0) + 1 > quantity(alloc.get('pods', '110')):
            return 'Too many pods'
        for r, v in self._requests(pod).items():
            if v <= 0:
                continue
            if used.get(r, 0) + v > quantity(alloc.get(r, '0')) + 1e-9:
                return 'Insufficient %s' % r
        return None

    def _schedule(self, rt, pod, nodes, usage):
        spec = pod.get('spec', {})
        if spec.get('schedulerName', 'default-scheduler') not in self.schedulers:
            return
        if pod.get('status', {}).get('phase') != 'Pending':
            return
        reasons = {}
        best = None
        for n in nodes:
            why = self._fits(pod, n, usage)
            if why:
                reasons[why] = reasons.get(why, 0) + 1
            elif best is None or usage[n['metadata']['name']].get('pods', 0) < usage[best['metadata']['name']].get('pods', 0):
                best = n
        md = pod['metadata']
        now = k8sstore.now_iso()
        if best is None:
            msg = '0/%d nodes are available: %s. preemption: 0/%d nodes are available: %d Preemption is not helpful for scheduling.' % (
                len(nodes), ', '.join('%d %s' % (c, r) for r, c in sorted(reasons.items())), len(nodes), len(nodes))
            if self.unschedulable_noted.get(md['uid']) == msg:
                return
            self.unschedulable_noted[md['uid']] = msg

            def mark(o):
                conds = [c for c in o.setdefault('status', {}).get('conditions', []) if c.get('type') != 'PodScheduled']
                conds.append({'type': 'PodScheduled', 'status': 'False', 'reason': 'Unschedulable', 'message': msg,
                              'lastProbeTime': None, 'lastTransitionTime': now})
                o['status']['conditions'] = conds
            self.store.mutate(rt, md['namespace'], md['name'], mark, uid=md['uid'])
            self._event(pod, 'Warning', 'FailedScheduling', msg, spec.get('schedulerName', 'default-scheduler'))
            return
        name = best['metadata']['name']
        u = usage[name]
        u['pods'] = u.get('pods', 0) + 1
        for r, v in self._requests(pod).items():
            u[r] = u.get(r, 0) + v
        self.unschedulable_noted.pop(md['uid'], None)

        def bind(o):
            o['spec']['nodeName'] = name
            conds = [c for c in o.setdefault('status', {}).get('conditions', []) if c.get('type') != 'PodScheduled']
            conds.append({'type': 'PodScheduled', 'status': 'True', 'lastProbeTime': None, 'lastTransitionTime': now})
            o['status']['conditions'] = conds
        if self.store.mutate(rt, md['namespace'], md['name'], bind, uid=md['uid']):
            self._event(pod, 'Normal', 'Scheduled', 'Successfully assigned %s/%s to %s' % (md['namespace'], md['name'], name),
                        spec.get('schedulerName', 'default-scheduler'))

    # ---- kubelet -----------------------------------------------------------------
    def _lookup_key(self, kind, ns, ref, key, optional):
        rt = self.store.types[('', kind)]
        try:
            obj = self.store.get(rt, ns, ref)
        except k8sstore.ApiError:
            if optional:
                return None
            raise ConfigError('%s "%s" not found' % (rt.singular, ref))
        if kind == 'secrets':
            data = obj.get('data') or {}
            if key not in data:
                if optional:
                    return None
                raise ConfigError("couldn't find key %s in Secret %s/%s" % (key, ns, ref))
            return base64.b64decode(data[key]).decode('utf-8', 'replace')
        data = obj.get('data') or {}
        if key not in data:
            if optional:
                return None
            raise ConfigError("couldn't find key %s in ConfigMap %s/%s" % (key, ns, ref))
        return data[key]

    def _field(self, pod, path):
        md = pod['metadata']
        m = re.match(r"^metadata\.(labels|annotations)\['([^']+)'\]$", path)
        if m:
            return (md.get(m.group(1)) or {}).get(m.group(2), '')
        return {'metadata.name': md['name'], 'metadata.namespace': md['namespace'], 'metadata.uid': md['uid'],
                'spec.nodeName': pod['spec'].get('nodeName', ''), 'spec.serviceAccountName': pod['spec'].get('serviceAccountName', ''),
                'status.podIP': '127.0.0.1', 'status.hostIP': '127.0.0.1', 'status.podIPs': '127.0.0.1',
                'status.hostIPs': '127.0.0.1'}.get(path, '')

    def _container_env(self, pod, c):
        ns = pod['metadata']['namespace']
        env = {}
        for ef in c.get('envFrom') or []:
            prefix = ef.get('prefix', '')
            for kind, refkey in (('configmaps', 'configMapRef'), ('secrets', 'secretRef')):
                ref = ef.get(refkey)
                if not ref:
                    continue
                try:
                    obj = self.store.get(self.store.types[('', kind)], ns, ref.get('name'))
                except k8sstore.ApiError:
                    if ref.get('optional'):
                        continue
                    raise ConfigError('%s "%s" not found' % (kind[:-1], ref.get('name')))
                for k, v in (obj.get('data') or {}).items():
                    env[prefix + k] = base64.b64decode(v).decode('utf-8', 'replace') if kind == 'secrets' else v
        for e in c.get('env') or []:
            name = e.get('name')
            if 'value' in e or not e.get('valueFrom'):
                env[name] = _env_expand(str(e.get('value', '')), env)
                continue
            vf = e['valueFrom']
            if vf.get('secretKeyRef'):
                r = vf['secretKeyRef']
                v = self._lookup_key('secrets', ns, r.get('name'), r.get('key'), r.get('optional'))
            elif vf.get('configMapKeyRef'):
                r = vf['configMapKeyRef']
                v = self._lookup_key('configmaps', ns, r.get('name'), r.get('key'), r.get('optional'))
            elif vf.get('fieldRef'):
                v = self._field(pod, vf['fieldRef'].get('fieldPath', ''))
            elif vf.get('resourceFieldRef'):
                res = vf['resourceFieldRef'].get('resource', '')
                kind, _, rname = res.partition('.')
                q = ((c.get('resources') or {}).get(kind) or {}).get(rname)
                div = quantity(vf['resourceFieldRef'].get('divisor', '1')) or 1
                v = str(int(-(-quantity(q) // div))) if q else ('16' if rname == 'cpu' else '0')
            else:
                v = ''
            if v is not None:
                env[name] = v
        return env

    def _mounts(self, pod, c, root):
        """Writes the pod's volumes under root; returns [(mountPath, hostPath)] longest first."""
        ns = pod['metadata']['namespace']
        vols = {v.get('name'): v for v in pod['spec'].get('volumes') or []}
        out = []
        for vm in c.get('volumeMounts') or []:
            v = vols.get(vm.get('name'))
            mp = vm.get('mountPath', '')
            if v is None or not mp.startswith('/'):
                raise ConfigError('volume "%s" not found' % vm.get('name'))
            if 'hostPath' in v:
                out.append((mp, v['hostPath'].get('path', mp)))
                continue
            host = os.path.join(root, mp.lstrip('/'))
            if vm.get('subPath'):
                host_src = os.path.join(root + '.vol', vm.get('name'))
            else:
                host_src = host
            os.makedirs(host_src, exist_ok=True)
            files = {}
            if 'configMap' in v or 'secret' in v:
                kind = 'configmaps' if 'configMap' in v else 'secrets'
                src = v.get('configMap') or v.get('secret')
                ref = src.get('name') or src.get('secretName')
                try:
                    obj = self.store.get(self.store.types[('', kind)], ns, ref)
                except k8sstore.ApiError:
                    if src.get('optional'):
                        obj = {}
                    else:
                        raise ConfigError('%s "%s" not found' % (kind[:-1], ref))
                data = {}
                for k, val in (obj.get('data') or {}).items():
                    data[k] = base64.b64decode(val) if kind == 'secrets' else val.encode()
                for k, val in (obj.get('binaryData') or {}).items():
                    data[k] = base64.b64decode(val)
                items = src.get('items')
                if items:
                    for it in items:
                        if it.get('key') not in data:
                            raise ConfigError("configmap references non-existent config key: %s" % it.get('key'))
                        files[it.get('path') or it['key']] = data[it['key']]
                else:
                    files = data
            elif 'emptyDir' in v:
                pass
            elif 'downwardAPI' in v:
                for it in v['downwardAPI'].get('items') or []:
                    if it.get('fieldRef'):
                        files[it['path']] = self._field(pod, it['fieldRef'].get('fieldPath', '')).encode()
            for rel, data in files.items():
                fp = os.path.join(host_src, rel)
                os.makedirs(os.path.dirname(fp), exist_ok=True)
                with open(fp, 'wb') as f:
                    f.write(data)
            if vm.get('subPath'):
                sp = os.path.join(host_src, vm['subPath'])
                os.makedirs(os.path.dirname(host), exist_ok=True)
                if os.path.lexists(host):
                    os.remove(host)
                os.symlink(sp, host)
            out.append((mp, host))
        out.sort(key=lambda x: -len(x[0]))
        return out

    @staticmethod
    def _rewrite(s, mounts):
        """Rewrites absolute paths under a mountPath to the pod's directory (also inside --flag=/path)."""
        for mp, host in mounts:
            mpn = mp.rstrip('/') or '/'
            pat = re.compile(r'(^|[=:,\s])' + re.escape(mpn) + r'(?=$|/|[\s,:])')
            s = pat.sub(lambda m: m.group(1) + host, s)
        return s

    def _start(self, rt, pod):
        md = pod['metadata']
        uid = md['uid']
        c = (pod['spec'].get('containers') or [{}])[0]
        d = os.path.join(self.pod_dir, '%s_%s_%s' % (md['namespace'], md['name'], uid[:8]))
        os.makedirs(d, exist_ok=True)
        self.dirs[uid] = d
        root = os.path.join(d, 'root')
        logp = os.path.join(d, 'log')
        try:
            penv = self._container_env(pod, c)
            mounts = self._mounts(pod, c, root)
        except (ConfigError, OSError) as e:
            if (pod.get('status', {}).get('containerStatuses') or [{}])[0].get('state', {}).get('waiting', {}).get('message') != str(e):
                self._event(pod, 'Warning', 'Failed', 'Error: %s' % e, 'kubelet', pod['spec'].get('nodeName'))
            self._waiting(rt, pod, 'CreateContainerConfigError', str(e))
            return
        # The kubelet bind-mounts a fresh, empty file at terminationMessagePath; here the
        # process gets that file's path in CCLTUNE_TERMINATION_LOG instead (README.md).
        term_log = os.path.join(d, 'termination-log')
        with open(term_log, 'wb'):
            pass
        env = dict(os.environ)
        env.update({'HOSTNAME': md['name'], 'KUBERNETES_SERVICE_HOST': '127.0.0.1',
                    'KUBERNETES_SERVICE_PORT': str(getattr(self.args, 'bound_port', '') or ''),
                    'CCLTUNE_MOUNT_ROOT': root, 'CCLTUNE_POD_DIR': d, 'CCLTUNE_TERMINATION_LOG': term_log})
        for k, v in penv.items():
            env[k] = self._rewrite(v, mounts)
        cmd = [_env_expand(x, penv) for x in (c.get('command') or [])]
        args = [_env_expand(x, penv) for x in (c.get('args') or [])]
        if not cmd:
            if 'ccltune' in (c.get('image') or ''):
                cmd = ['ccltune']
            else:
                cmd = []
        argv = [self._rewrite(x, mounts) for x in cmd + args]
        if argv and (argv[0] == 'ccltune' or (argv[0].startswith('/') and os.path.basename(argv[0]) == 'ccltune'
                                             and not os.path.exists(argv[0]))):
            if not self.bin:
                self._fail_start(rt, pod, 'exec: "ccltune": the simulator has no CCLTUNE_BIN / --ccltune-bin to run')
                return
            argv[0] = self.bin
        if not argv:
            self._fail_start(rt, pod, 'no command: the simulator cannot run an image\'s default entrypoint')
            return
        wd = c.get('workingDir')
        cwd = self._rewrite(wd, mounts) if wd else d
        if not os.path.isdir(cwd):
            cwd = d
        log = open(logp, 'ab')
        try:
            popen = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True, preexec_fn=_child_setup)
        except OSError as e:
            log.close()
            self._fail_start(rt, pod, 'failed to create containerd task: exec: "%s": %s' % (argv[0], e.strerror))
            return
        proc = Proc(pod, popen, log, time.time(), d)
        with self.lock:
            self.procs[uid] = proc
        threading.Thread(target=self._waiter, args=(proc,), daemon=True).start()
        now = k8sstore.now_iso()
        cname = c.get('name', 'main')

        def running(o):
            st = o.setdefault('status', {})
            st['phase'] = 'Running'
            st['hostIP'] = '127.0.0.1'
            st['hostIPs'] = [{'ip': '127.0.0.1'}]
            st['podIP'] = '127.0.0.1'
            st['podIPs'] = [{'ip': '127.0.0.1'}]
            st['startTime'] = now
            conds = [x for x in st.get('conditions', []) if x.get('type') == 'PodScheduled']
            for t in ('PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady'):
                conds.append({'type': t, 'status': 'True', 'lastProbeTime': None, 'lastTransitionTime': now})
            st['conditions'] = conds
            st['containerStatuses'] = [{'name': cname, 'image': c.get('image', ''), 'imageID': '', 'ready': True,
                                        'started': True, 'restartCount': 0, 'containerID': 'sim://%d' % popen.pid,
                                        'state': {'running': {'startedAt': now}}}]
        self.store.mutate(rt, md['namespace'], md['name'], running, uid=uid)
        self._event(pod, 'Normal', 'Started', 'Started container %s' % cname, 'kubelet', pod['spec'].get('nodeName'))

    def _waiter(self, proc):
        proc.popen.wait()
        try:
            proc.log.close()
        except OSError:
            pass
        self.wake.set()

    def _waiting(self, rt, pod, reason, msg):
        md = pod['metadata']
        c = (pod['spec'].get('containers') or [{}])[0]

        def f(o):
            st = o.setdefault('status', {})
            st['containerStatuses'] = [{'name': c.get('name', 'main'), 'image': c.get('image', ''), 'imageID': '',
                                        'ready': False, 'started': False, 'restartCount': 0,
                                        'state': {'waiting': {'reason': reason, 'message': msg}}}]
        self.store.mutate(rt, md['namespace'], md['name'], f, uid=md['uid'])
        self.retry = True   # retried on the next pass, as the kubelet does

    def _fail_start(self, rt, pod, msg):
        md = pod['metadata']
        c = (pod['spec'].get('containers') or [{}])[0]
        now = k8sstore.now_iso()

        def f(o):
            st = o.setdefault('status', {})
            st['phase'] = 'Failed'
            st['startTime'] = st.get('startTime') or now
            st['containerStatuses'] = [{'name': c.get('name', 'main'), 'image': c.get('image', ''), 'imageID': '',
                                        'ready': False, 'started': False, 'restartCount': 0,
                                        'state': {'terminated': {'exitCode': 128, 'reason': 'StartError', 'message': msg,
                                                                 'startedAt': now, 'finishedAt': now}}}]
        self.store.mutate(rt, md['namespace'], md['name'], f, uid=md['uid'])

    def _report_exit(self, rt, pod, proc, rc):
        md = pod['metadata']
        c = (pod['spec'].get('containers') or [{}])[0]
        code = rc if rc >= 0 else 128 + (-rc)
        now = k8sstore.now_iso()
        started = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(proc.started))
        message = self._termination_message(c, proc, code)

        def f(o):
            st = o.setdefault('status', {})
            st['phase'] = 'Succeeded' if code == 0 else 'Failed'
            if proc.deadline_exceeded:
                st['phase'] = 'Failed'
                st['reason'] = 'DeadlineExceeded'
                st['message'] = 'Pod was active on the node longer than the specified deadline'
            term = {'exitCode': code, 'reason': 'Completed' if code == 0 else 'Error', 'startedAt': started,
                    'finishedAt': now, 'containerID': 'sim://%d' % proc.popen.pid}
            if message:
                term['message'] = message
            st['containerStatuses'] = [{'name': c.get('name', 'main'), 'image': c.get('image', ''), 'imageID': '',
                                        'ready': False, 'started': False, 'restartCount': 0,
                                        'containerID': 'sim://%d' % proc.popen.pid, 'state': {'terminated': term}}]
            conds = []
            for x in st.get('conditions', []):
                if x.get('type') in ('Ready', 'ContainersReady'):
                    x = dict(x, status='False', reason='PodCompleted', lastTransitionTime=now)
                if x.get('type') == 'PodReadyToStartContainers':
                    x = dict(x, status='False', lastTransitionTime=now)
                conds.append(x)
            st['conditions'] = conds
        self.store.mutate(rt, md['namespace'], md['name'], f, uid=md['uid'])
        proc.reported = True

    @staticmethod
    def _tail(path, max_bytes, max_lines=None):
        with open(path, 'rb') as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - max_bytes))
            data = f.read()
        if max_lines is not None:
            data = b''.join(data.splitlines(keepends=True)[-max_lines:])
        return data.decode('utf-8', 'replace')

    def _termination_message(self, c, proc, code):
        """As the kubelet's getTerminationMessage: the end of the termination-log file (at most
        4096 bytes); with FallbackToLogsOnError, a failed container and an empty or missing
        file, the log's last 80 lines / 2048 bytes."""
        fallback = c.get('terminationMessagePolicy') == 'FallbackToLogsOnError' and code != 0
        try:
            message = self._tail(os.path.join(proc.dir, 'termination-log'), TERMINATION_MESSAGE_MAX)
        except FileNotFoundError:
            message = ''
        except OSError as e:
            return 'Error on reading termination log %s: %s' % (c.get('terminationMessagePath'), e)
        if not message and fallback:
            try:
                message = self._tail(os.path.join(proc.dir, 'log'), TERMINATION_LOG_TAIL_BYTES,
                                     TERMINATION_LOG_TAIL_LINES)
            except OSError:
                pass
        return message or None

    def _terminate(self, rt, pod, proc):
        md = pod['metadata']
        if proc is None or proc.popen.poll() is not None:
            if proc is not None and not proc.reported and not proc.term_sent:
                self._report_exit(rt, pod, proc, proc.popen.returncode)
            self.store.remove_now(rt, md['namespace'], md['name'], uid=md['uid'])
            self._forget(md['uid'])
            return
        grace = min(float(md.get('deletionGracePeriodSeconds') or 0), 5.0)
        if proc.term_sent is None:
            proc.term_sent = time.monotonic()
            c = (pod['spec'].get('containers') or [{}])[0]
            self._event(pod, 'Normal', 'Killing', 'Stopping container %s' % c.get('name', ''), 'kubelet',
                        pod['spec'].get('nodeName'))
            self._signal(proc, signal.SIGTERM if grace > 0 else signal.SIGKILL)
        elif time.monotonic() - proc.term_sent >= grace and not proc.killed:
            proc.killed = True
            self._signal(proc, signal.SIGKILL)

    def _signal(self, proc, sig):
        try:
            os.killpg(proc.popen.pid, sig)
        except (ProcessLookupError, PermissionError):
            try:
                proc.popen.send_signal(sig)
            except ProcessLookupError:
                pass

    def _forget(self, uid):
        with self.lock:
            p = self.procs.pop(uid, None)
        if p is not None:
            try:
                p.log.close()
            except OSError:
                pass
        d = self.dirs.pop(uid, None)
        self.unschedulable_noted.pop(uid, None)
        if d and not self.args.keep_pod_dirs:
            shutil.rmtree(d, ignore_errors=True)

"""meta.k8s.io/v1 Table responses (what `kubectl get` asks for)."""

import datetime
import json
import re


def human_duration(seconds):
    s = int(seconds)
    if s < -1:
        return '<invalid>'
    if s < 0:
        return '0s'
    if s < 120:
        return '%ds' % s
    m = s // 60
    if m < 10:
        return '%dm' % m if s % 60 == 0 else '%dm%ds' % (m, s % 60)
    if m < 180:
        return '%dm' % m
    h = s // 3600
    if h < 8:
        return '%dh' % h if m % 60 == 0 else '%dh%dm' % (h, m % 60)
    if h < 48:
        return '%dh' % h
    if h < 24 * 8:
        return '%dd' % (h // 24) if h % 24 == 0 else '%dd%dh' % (h // 24, h % 24)
    if h < 24 * 365 * 2:
        return '%dd' % (h // 24)
    if h < 24 * 365 * 8:
        dy = (h // 24) % 365
        return '%dy' % (h // 24 // 365) if dy == 0 else '%dy%dd' % (h // 24 // 365, dy)
    return '%dy' % (h // 24 // 365)


def age(ts):
    if not ts:
        return '<unknown>'
    try:
        t = datetime.datetime.strptime(ts, '%Y-%m-%dT%H:%M:%SZ').replace(tzinfo=datetime.timezone.utc)
    except ValueError:
        return '<invalid>'
    return human_duration((datetime.datetime.now(datetime.timezone.utc) - t).total_seconds())


_SEG = re.compile(r'\.([A-Za-z0-9_-]+)|\[(\d+|\*)\]|\[\?\(@\.([A-Za-z0-9_.-]+)\s*==\s*["\']([^"\']*)["\']\)\]|\[[\'"]([^\'"]+)[\'"]\]')


def jsonpath(obj, path):
    """Simple JSONPath: .a.b, [n], [*], ['key'], [?(@.f=="v")]. Returns the list of results."""
    p = path.strip()
    if p.startswith('{') and p.endswith('}'):
        p = p[1:-1]
    if p.startswith('$'):
        p = p[1:]
    cur = [obj]
    pos = 0
    while pos < len(p):
        m = _SEG.match(p, pos)
        if not m:
            return []
        field, idx, ffield, fval, qkey = m.groups()
        nxt = []
        for c in cur:
            if field is not None or qkey is not None:
                k = field if field is not None else qkey
                if isinstance(c, dict) and k in c:
                    nxt.append(c[k])
            elif idx is not None:
                if isinstance(c, list):
                    if idx == '*':
                        nxt.extend(c)
                    elif int(idx) < len(c):
                        nxt.append(c[int(idx)])
            else:
                if isinstance(c, list):
                    for e in c:
                        v = e
                        for part in ffield.split('.'):
                            v = v.get(part) if isinstance(v, dict) else None
                        if v is not None and str(v) == fval:
                            nxt.append(e)
        cur = nxt
        pos = m.end()
    return cur


def _cell(typ, value):
    if value is None:
        return None
    if typ == 'date':
        return age(value) if isinstance(value, str) else None
    if typ == 'integer':
        return value if isinstance(value, int) else None
    if typ == 'number':
        return value if isinstance(value, (int, float)) else None
    if typ == 'boolean':
        return value if isinstance(value, bool) else None
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(',', ':'))
    if isinstance(value, bool):
        return 'true' if value else 'false'
    return str(value)


def _col(name, typ='string', fmt='', desc='', priority=0):
    return {'name': name, 'type': typ, 'format': fmt, 'description': desc or name, 'priority': priority}


NAME_COL = _col('Name', 'string', 'name', 'Name must be unique within a namespace.')
AGE_COL = _col('Age', 'string', '', 'CreationTimestamp is a timestamp representing the server time when this object was created.')


def _pod_cells(o):
    spec, st = o.get('spec', {}), o.get('status', {})
    cs = st.get('containerStatuses') or []
    ready = sum(1 for c in cs if c.get('ready'))
    total = len(spec.get('containers') or [])
    reason = st.get('reason') or st.get('phase') or 'Pending'
    restarts = sum(c.get('restartCount', 0) for c in cs)
    for c in cs:
        state = c.get('state') or {}
        if state.get('waiting', {}).get('reason'):
            reason = state['waiting']['reason']
        elif state.get('terminated'):
            t = state['terminated']
            reason = t.get('reason') or ('Signal:%d' % t['signal'] if t.get('signal') else 'ExitCode:%d' % t.get('exitCode', 0))
    if st.get('phase') == 'Pending' and not cs and spec.get('nodeName'):
        reason = 'ContainerCreating'
    if o['metadata'].get('deletionTimestamp'):
        reason = 'Terminating'
    return ['%d/%d' % (ready, total), reason, restarts, age(o['metadata'].get('creationTimestamp')),
            st.get('podIP') or '<none>', spec.get('nodeName') or '<none>', '<none>', '<none>']


POD_COLS = [_col('Ready', 'string', '', 'The aggregate readiness state of this pod for accepting traffic.'),
            _col('Status', 'string', '', 'The aggregate status of the containers in this pod.'),
            _col('Restarts', 'string', '', 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.'),
            AGE_COL,
            _col('IP', 'string', '', 'IP address allocated to the pod.', 1),
            _col('Node', 'string', '', 'Name of the node this pod is assigned to.', 1),
            _col('Nominated Node', 'string', '', 'Nominated node', 1),
            _col('Readiness Gates', 'string', '', 'Readiness gates', 1)]


def columns_and_cells(rt, version):
    """Returns (columnDefinitions without Name, fn(obj) -> cells without name)."""
    if rt.crd is not None:
        v = rt.crd_version(version) or {}
        cols = v.get('additionalPrinterColumns')
        if not cols:
            return [AGE_COL], lambda o: [age(o['metadata'].get('creationTimestamp'))]
        defs = [_col(c['name'], c.get('type', 'string'), c.get('format', ''), c.get('description', ''), c.get('priority', 0))
                for c in cols]

        def cells(o):
            out = []
            for c in cols:
                r = jsonpath(o, c.get('jsonPath', ''))
                out.append(_cell(c.get('type', 'string'), r[0] if r else None))
            return out
        return defs, cells
    if rt.key == ('', 'pods'):
        return POD_COLS, _pod_cells
    if rt.key == ('', 'namespaces'):
        return ([_col('Status', 'string', '', 'The status of the namespace'), AGE_COL],
                lambda o: [o.get('status', {}).get('phase', ''), age(o['metadata'].get('creationTimestamp'))])
    if rt.key == ('', 'configmaps'):
        return ([_col('Data', 'string', '', 'Number of data'), AGE_COL],
                lambda o: [len(o.get('data') or {}) + len(o.get('binaryData') or {}), age(o['metadata'].get('creationTimestamp'))])
    if rt.key == ('', 'nodes'):
        def node_cells(o):
            ready = next((c.get('status') for c in o.get('status', {}).get('conditions', []) if c.get('type') == 'Ready'), 'Unknown')
            return ['Ready' if ready == 'True' else 'NotReady', '<none>', age(o['metadata'].get('creationTimestamp')),
                    o.get('status', {}).get('nodeInfo', {}).get('kubeletVersion', '')]
        return ([_col('Status'), _col('Roles'), AGE_COL, _col('Version')], node_cells)
    if rt.key == ('', 'events'):
        return ([_col('Last Seen'), _col('Type'), _col('Reason'), _col('Object'), _col('Message')],
                lambda o: [age(o.get('lastTimestamp') or o.get('eventTime') or o['metadata'].get('creationTimestamp')),
                           o.get('type', ''), o.get('reason', ''),
                           '%s/%s' % (o.get('involvedObject', {}).get('kind', '').lower(), o.get('involvedObject', {}).get('name', '')),
                           o.get('message', '')])
    if rt.key == ('apiextensions.k8s.io', 'customresourcedefinitions'):
        return ([_col('Created At', 'date')], lambda o: [o['metadata'].get('creationTimestamp')])
    return [AGE_COL], lambda o: [age(o['metadata'].get('creationTimestamp'))]


def table(rt, version, objs, rv, include='Metadata', cont=None, remaining=None, with_columns=True):
    defs, fn = columns_and_cells(rt, version)
    name_last = rt.key == ('', 'events')     # kubectl shows events without a NAME column (priority 1, last)
    rows = []
    for o in objs:
        row = {'cells': fn(o) + [o['metadata']['name']] if name_last else [o['metadata']['name']] + fn(o)}
        if include == 'Object':
            row['object'] = o
        elif include != 'None':
            row['object'] = {'kind': 'PartialObjectMetadata', 'apiVersion': 'meta.k8s.io/v1', 'metadata': o['metadata']}
        rows.append(row)
    md = {'resourceVersion': rv}
    if cont:
        md['continue'] = cont
    if remaining is not None:
        md['remainingItemCount'] = remaining
    t = {'kind': 'Table', 'apiVersion': 'meta.k8s.io/v1', 'metadata': md, 'rows': rows}
    cols = defs + [dict(NAME_COL, priority=1)] if name_last else [NAME_COL] + defs
    t['columnDefinitions'] = cols if with_columns else []
    return t

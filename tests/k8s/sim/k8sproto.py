"""Just enough Kubernetes protobuf decoding for what kubectl's typed clients POST/PUT
(`kubectl create namespace|configmap|secret|serviceaccount`): the k8s\\x00 envelope,
ObjectMeta, Namespace, ConfigMap, Secret, ServiceAccount. Other types answer 415."""

import base64

MAGIC = b'k8s\x00'


def _varint(b, i):
    shift = result = 0
    while True:
        c = b[i]
        i += 1
        result |= (c & 0x7f) << shift
        if not c & 0x80:
            return result, i
        shift += 7


def fields(b):
    """Yields (field number, wire type, value) for one message."""
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError('unsupported wire type %d' % wt)
        yield f, wt, v


def _map(entries, bytes_values=False):
    out = {}
    for e in entries:
        k = v = None
        for f, _, val in fields(e):
            if f == 1:
                k = val.decode()
            elif f == 2:
                v = base64.b64encode(val).decode() if bytes_values else val.decode()
        out[k] = v if v is not None else ''
    return out


def _owner_ref(b):
    names = {1: 'kind', 3: 'name', 4: 'uid', 5: 'apiVersion'}
    out = {}
    for f, wt, v in fields(b):
        if f in names:
            out[names[f]] = v.decode()
        elif f == 6:
            out['controller'] = bool(v)
        elif f == 7:
            out['blockOwnerDeletion'] = bool(v)
    return out


def object_meta(b):
    md, labels, ann, refs, fins = {}, [], [], [], []
    names = {1: 'name', 2: 'generateName', 3: 'namespace', 5: 'uid', 6: 'resourceVersion'}
    for f, wt, v in fields(b):
        if f in names:
            if v:
                md[names[f]] = v.decode()
        elif f == 11:
            labels.append(v)
        elif f == 12:
            ann.append(v)
        elif f == 13:
            refs.append(_owner_ref(v))
        elif f == 14:
            fins.append(v.decode())
    if labels:
        md['labels'] = _map(labels)
    if ann:
        md['annotations'] = _map(ann)
    if refs:
        md['ownerReferences'] = refs
    if fins:
        md['finalizers'] = fins
    return md


def decode(data):
    """Returns the JSON-shaped object, or raises ValueError."""
    if not data.startswith(MAGIC):
        raise ValueError('no protobuf envelope')
    api_version = kind = ''
    raw = b''
    for f, wt, v in fields(data[4:]):
        if f == 1:
            for g, _, tv in fields(v):
                if g == 1:
                    api_version = tv.decode()
                elif g == 2:
                    kind = tv.decode()
        elif f == 2:
            raw = v
    obj = {'apiVersion': api_version, 'kind': kind}
    maps = {}
    for f, wt, v in fields(raw):
        if f == 1:
            obj['metadata'] = object_meta(v)
            continue
        if kind == 'Namespace' and f == 2:
            obj['spec'] = {'finalizers': [x.decode() for g, _, x in fields(v) if g == 1]}
        elif kind == 'ConfigMap' and f in (2, 3):
            maps.setdefault(f, []).append(v)
        elif kind == 'ConfigMap' and f == 4:
            obj['immutable'] = bool(v)
        elif kind == 'Secret' and f in (2, 4):
            maps.setdefault(f, []).append(v)
        elif kind == 'Secret' and f == 3:
            if v:
                obj['type'] = v.decode()
        elif kind == 'Secret' and f == 5:
            obj['immutable'] = bool(v)
        elif kind == 'ServiceAccount' and f == 4:
            obj['automountServiceAccountToken'] = bool(v)
        elif kind not in ('Namespace', 'ConfigMap', 'Secret', 'ServiceAccount'):
            raise ValueError('protobuf decoding of %s is not supported' % kind)
    if kind == 'ConfigMap':
        if 2 in maps:
            obj['data'] = _map(maps[2])
        if 3 in maps:
            obj['binaryData'] = _map(maps[3], bytes_values=True)
    if kind == 'Secret':
        if 2 in maps:
            obj['data'] = _map(maps[2], bytes_values=True)
        if 4 in maps:
            obj['stringData'] = _map(maps[4])
    return obj

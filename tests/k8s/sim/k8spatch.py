"""Patch flavours the simulator accepts.

* application/merge-patch+json: RFC 7386.
* application/strategic-merge-patch+json: an approximation of Kubernetes' strategic
  merge patch: maps merge as in a merge patch; lists of maps whose elements carry a
  known merge key (name, containerPort, port, type, mountPath, ...) merge element by
  element; the directives $patch (replace/delete/merge), $setElementOrder/<f>,
  $deleteFromPrimitiveList/<f> and $retainKeys are honoured; other lists are replaced
  (finalizers merge as a set, as in Kubernetes).
* application/json-patch+json: RFC 6902.
"""

import copy

MERGE_KEYS = ('name', 'containerPort', 'port', 'type', 'mountPath', 'devicePath',
              'ip', 'uid', 'topologyKey', 'key')
SET_LISTS = ('finalizers',)


class PatchError(ValueError):
    pass


def merge_patch(target, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    out = dict(target)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def _merge_key(items):
    for k in MERGE_KEYS:
        if items and all(isinstance(i, dict) and k in i for i in items):
            return k
    return None


def strategic_merge_patch(target, patch, field=None):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get('$patch') == 'replace':
        p = {k: v for k, v in patch.items() if k != '$patch'}
        return strategic_merge_patch({}, p)
    if patch.get('$patch') == 'delete':
        return None
    if not isinstance(target, dict):
        target = {}
    out = dict(target)
    retain = patch.get('$retainKeys')
    orders = {}
    for k, v in patch.items():
        if k in ('$patch', '$retainKeys'):
            continue
        if k.startswith('$setElementOrder/'):
            orders[k.split('/', 1)[1]] = v
            continue
        if k.startswith('$deleteFromPrimitiveList/'):
            f = k.split('/', 1)[1]
            if isinstance(out.get(f), list):
                out[f] = [x for x in out[f] if x not in v]
            continue
        if v is None:
            out.pop(k, None)
        elif isinstance(v, list):
            out[k] = _smp_list(out.get(k), v, k)
        elif isinstance(v, dict):
            r = strategic_merge_patch(out.get(k), v, k)
            if r is None:
                out.pop(k, None)
            else:
                out[k] = r
        else:
            out[k] = v
    for f, order in orders.items():
        cur = out.get(f)
        if not isinstance(cur, list):
            continue
        key = _merge_key([o for o in order if isinstance(o, dict)]) if order and isinstance(order[0], dict) else None
        if key:
            idx = {o.get(key): n for n, o in enumerate(order)}
            cur.sort(key=lambda e: idx.get(e.get(key) if isinstance(e, dict) else None, len(idx)))
        else:
            idx = {o: n for n, o in enumerate(order) if not isinstance(o, (dict, list))}
            cur.sort(key=lambda e: idx.get(e, len(idx)) if not isinstance(e, (dict, list)) else len(idx))
    if isinstance(retain, list):
        out = {k: v for k, v in out.items() if k in retain}
    return out


def _smp_list(cur, plist, field):
    if any(isinstance(e, dict) and e.get('$patch') == 'replace' for e in plist):
        return [copy.deepcopy(e) for e in plist if not (isinstance(e, dict) and '$patch' in e)]
    if field in SET_LISTS and isinstance(cur, list):
        out = list(cur)
        for e in plist:
            if e not in out:
                out.append(e)
        return out
    key = _merge_key(plist)
    if not key or not isinstance(cur, list) or not all(isinstance(e, dict) for e in cur):
        return [strategic_merge_patch({}, e) if isinstance(e, dict) else copy.deepcopy(e)
                for e in plist if not (isinstance(e, dict) and e.get('$patch') == 'delete')]
    out = [copy.deepcopy(e) for e in cur]
    for e in plist:
        pos = next((i for i, c in enumerate(out) if c.get(key) == e.get(key)), None)
        if e.get('$patch') == 'delete':
            if pos is not None:
                out.pop(pos)
            continue
        if pos is None:
            out.append(strategic_merge_patch({}, e))
        else:
            out[pos] = strategic_merge_patch(out[pos], e)
    return out


def _ptr(path):
    if path == '':
        return []
    if not path.startswith('/'):
        raise PatchError('invalid JSON pointer %r' % path)
    return [p.replace('~1', '/').replace('~0', '~') for p in path[1:].split('/')]


def _walk(doc, parts):
    cur = doc
    for p in parts:
        if isinstance(cur, list):
            cur = cur[int(p)]
        elif isinstance(cur, dict):
            cur = cur[p]
        else:
            raise PatchError('path not found')
    return cur


def json_patch(doc, ops):
    doc = copy.deepcopy(doc)
    if not isinstance(ops, list):
        raise PatchError('json patch must be a list')
    for op in ops:
        try:
            kind = op['op']
            parts = _ptr(op['path'])
            if kind == 'test':
                if _walk(doc, parts) != op.get('value'):
                    raise PatchError('test operation failed at %s' % op['path'])
                continue
            if kind in ('move', 'copy'):
                src = _ptr(op['from'])
                val = copy.deepcopy(_walk(doc, src))
                if kind == 'move':
                    parent = _walk(doc, src[:-1])
                    if isinstance(parent, list):
                        parent.pop(int(src[-1]))
                    else:
                        del parent[src[-1]]
                kind, op = 'add', {'value': val}
            if not parts:
                if kind in ('add', 'replace'):
                    doc = copy.deepcopy(op['value'])
                    continue
                raise PatchError('cannot remove the root')
            parent = _walk(doc, parts[:-1])
            last = parts[-1]
            if kind == 'add':
                if isinstance(parent, list):
                    if last == '-':
                        parent.append(copy.deepcopy(op['value']))
                    else:
                        parent.insert(int(last), copy.deepcopy(op['value']))
                else:
                    parent[last] = copy.deepcopy(op['value'])
            elif kind == 'replace':
                if isinstance(parent, list):
                    parent[int(last)] = copy.deepcopy(op['value'])
                else:
                    if last not in parent:
                        raise PatchError('replace operation does not apply: doc is missing key: %s' % op['path'])
                    parent[last] = copy.deepcopy(op['value'])
            elif kind == 'remove':
                if isinstance(parent, list):
                    parent.pop(int(last))
                else:
                    if last not in parent:
                        raise PatchError('remove operation does not apply: doc is missing path: %s' % op['path'])
                    del parent[last]
            else:
                raise PatchError('unknown op %r' % kind)
        except (KeyError, IndexError, ValueError, TypeError) as e:
            if isinstance(e, PatchError):
                raise
            raise PatchError('json patch failed: %s' % e)
    return doc

"""Label and field selectors, as the Kubernetes API server parses them."""

import re


class SelectorError(ValueError):
    pass


def _split_top(s):
    """Split on commas that are not inside parentheses."""
    out, depth, cur = [], 0, []
    for ch in s:
        if ch == '(':
            depth += 1
        elif ch == ')':
            depth -= 1
        if ch == ',' and depth == 0:
            out.append(''.join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append(''.join(cur))
    return [p.strip() for p in out if p.strip()]


_SET_RE = re.compile(r'^([A-Za-z0-9_./-]+)\s+(in|notin)\s*\((.*)\)$')
_CMP_RE = re.compile(r'^([A-Za-z0-9_./-]+)\s*(==|!=|=)\s*([A-Za-z0-9_.-]*)$')
_KEY_RE = re.compile(r'^(!?)\s*([A-Za-z0-9_./-]+)$')


def parse_label_selector(s):
    """Returns a list of (key, op, values); op in = != in notin exists !exists."""
    reqs = []
    if not s:
        return reqs
    for part in _split_top(s):
        m = _SET_RE.match(part)
        if m:
            vals = [v.strip() for v in m.group(3).split(',') if v.strip()]
            reqs.append((m.group(1), m.group(2), vals))
            continue
        m = _CMP_RE.match(part)
        if m:
            op = '=' if m.group(2) in ('=', '==') else '!='
            reqs.append((m.group(1), op, [m.group(3)]))
            continue
        m = _KEY_RE.match(part)
        if m:
            reqs.append((m.group(2), '!exists' if m.group(1) else 'exists', []))
            continue
        raise SelectorError('unable to parse requirement: %r' % part)
    return reqs


def label_match(reqs, labels):
    labels = labels or {}
    for key, op, vals in reqs:
        has = key in labels
        v = labels.get(key)
        if op == '=' and not (has and v == vals[0]):
            return False
        if op == '!=' and has and v == vals[0]:
            return False
        if op == 'in' and not (has and v in vals):
            return False
        if op == 'notin' and has and v in vals:
            return False
        if op == 'exists' and not has:
            return False
        if op == '!exists' and has:
            return False
    return True


def parse_field_selector(s):
    reqs = []
    if not s:
        return reqs
    for part in s.split(','):
        part = part.strip()
        if not part:
            continue
        for op in ('!=', '==', '='):
            if op in part:
                k, v = part.split(op, 1)
                reqs.append((k.strip(), '!=' if op == '!=' else '=', v.strip()))
                break
        else:
            raise SelectorError('invalid selector: %r; can\'t understand %r' % (s, part))
    return reqs


def field_value(obj, path):
    cur = obj
    for p in path.split('.'):
        if not isinstance(cur, dict):
            return ''
        cur = cur.get(p)
        if cur is None:
            return ''
    if isinstance(cur, bool):
        return 'true' if cur else 'false'
    return str(cur)


def field_match(reqs, obj):
    for key, op, val in reqs:
        got = field_value(obj, key)
        if op == '=' and got != val:
            return False
        if op == '!=' and got == val:
            return False
    return True

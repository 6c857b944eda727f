"""Structural-schema handling for custom resources, as the apiextensions server does it:
pruning of unknown fields (reported so that fieldValidation=Strict can reject them),
defaulting, and validation (type, enum, required, minimum/maximum, exclusive bounds,
minLength/maxLength, pattern, minItems/maxItems, uniqueItems, minProperties/maxProperties,
nullable, x-kubernetes-int-or-string, x-kubernetes-preserve-unknown-fields,
x-kubernetes-validations with a small CEL subset: field access, has(), size(),
arithmetic, comparisons, && || !, ?:, in, all/exists/exists_one/filter/map macros,
startsWith/endsWith/contains/matches). A CEL rule the subset cannot parse is skipped."""

import copy
import json
import re
import sys

_WARNED = set()
# formats the apiextensions server checks (the others are accepted as plain strings)
_FORMATS = {
    'date-time': re.compile(r'^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$'),
    'date': re.compile(r'^\d{4}-\d{2}-\d{2}$'),
    'uuid': re.compile(r'^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$'),
    'byte': re.compile(r'^[A-Za-z0-9+/]*={0,2}$'),
}


def validate(obj, schema, crd_version, old):
    errs, unknown = [], []
    root = schema
    props = root.get('properties') or {}
    for k in list(obj.keys()):
        if k in ('apiVersion', 'kind', 'metadata'):
            continue
        if k not in props and not root.get('x-kubernetes-preserve-unknown-fields'):
            unknown.append(k)
            del obj[k]
    for k, sub in props.items():
        if k in ('apiVersion', 'kind', 'metadata'):
            continue
        _default(obj, k, sub)
        if k in obj:
            _walk(obj[k], sub, k, errs, unknown, (old or {}).get(k) if isinstance(old, dict) else None)
    for k in root.get('required') or []:
        if k not in obj and k not in ('apiVersion', 'kind', 'metadata'):
            errs.append((k, 'Required value'))
    _cel(obj, root, '', errs, old)
    return errs, unknown


def _default(parent, key, sub):
    if key not in parent and 'default' in sub:
        parent[key] = copy.deepcopy(sub['default'])
    elif key in parent and parent[key] is None and not sub.get('nullable'):
        if 'default' in sub:
            parent[key] = copy.deepcopy(sub['default'])
        else:
            del parent[key]


def _type_ok(v, t, s):
    if s.get('x-kubernetes-int-or-string'):
        return isinstance(v, (int, str)) and not isinstance(v, bool)
    if not t:
        return True
    return {'object': lambda: isinstance(v, dict),
            'array': lambda: isinstance(v, list),
            'string': lambda: isinstance(v, str),
            'integer': lambda: isinstance(v, int) and not isinstance(v, bool) or (isinstance(v, float) and v.is_integer()),
            'number': lambda: isinstance(v, (int, float)) and not isinstance(v, bool),
            'boolean': lambda: isinstance(v, bool)}.get(t, lambda: True)()


def _jstr(v):
    if isinstance(v, str):
        return '"%s"' % v
    if isinstance(v, bool):
        return 'true' if v else 'false'
    if isinstance(v, (dict, list)):
        return '"%s"' % ('object' if isinstance(v, dict) else 'array')
    return str(v)


def _walk(v, s, path, errs, unknown, old):
    if v is None:
        if not s.get('nullable'):
            errs.append((path, 'Invalid value: "null": %s in body must be of type %s: "null"' % (path, s.get('type', 'object'))))
        return
    t = s.get('type')
    if not _type_ok(v, t, s):
        got = type(v).__name__
        got = {'str': 'string', 'int': 'integer', 'float': 'number', 'bool': 'boolean', 'dict': 'object', 'list': 'array'}.get(got, got)
        errs.append((path, 'Invalid value: "%s": %s in body must be of type %s: "%s"' % (got, path, t, got)))
        return
    if 'enum' in s and v not in s['enum']:
        errs.append((path, 'Unsupported value: %s: supported values: %s' % (_jstr(v), ', '.join(_jstr(e) for e in s['enum']))))
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if s.get('format') == 'int32' and isinstance(v, int) and not -2 ** 31 <= v < 2 ** 31:
            errs.append((path, 'Invalid value: %s: %s in body must be of type int32: "%s"' % (v, path, v)))
        if 'minimum' in s:
            if s.get('exclusiveMinimum') and v <= s['minimum']:
                errs.append((path, 'Invalid value: %s: %s in body should be greater than %s' % (v, path, s['minimum'])))
            elif v < s['minimum']:
                errs.append((path, 'Invalid value: %s: %s in body should be greater than or equal to %s' % (v, path, s['minimum'])))
        if 'maximum' in s:
            if s.get('exclusiveMaximum') and v >= s['maximum']:
                errs.append((path, 'Invalid value: %s: %s in body should be less than %s' % (v, path, s['maximum'])))
            elif v > s['maximum']:
                errs.append((path, 'Invalid value: %s: %s in body should be less than or equal to %s' % (v, path, s['maximum'])))
        if s.get('multipleOf') and v % s['multipleOf']:
            errs.append((path, 'Invalid value: %s: %s in body should be a multiple of %s' % (v, path, s['multipleOf'])))
    if isinstance(v, str):
        if 'minLength' in s and len(v) < s['minLength']:
            errs.append((path, 'Invalid value: "%s": %s in body should be at least %d chars long' % (v, path, s['minLength'])))
        if 'maxLength' in s and len(v) > s['maxLength']:
            errs.append((path, 'Too long: may not be more than %d bytes' % s['maxLength']))
        fmt = s.get('format')
        if fmt in _FORMATS and not _FORMATS[fmt].match(v):
            errs.append((path, 'Invalid value: "%s": %s in body must be of type %s: "%s"' % (v, path, fmt, v)))
        if 'pattern' in s:
            try:
                if not re.search(s['pattern'], v):
                    errs.append((path, 'Invalid value: "%s": %s in body should match \'%s\'' % (v, path, s['pattern'])))
            except re.error:
                pass
    if isinstance(v, list):
        if 'minItems' in s and len(v) < s['minItems']:
            errs.append((path, 'Invalid value: %d: %s in body should have at least %d items' % (len(v), path, s['minItems'])))
        if 'maxItems' in s and len(v) > s['maxItems']:
            errs.append((path, 'Too many: %d: must have at most %d items' % (len(v), s['maxItems'])))
        if s.get('uniqueItems') and len({repr(x) for x in v}) != len(v):
            errs.append((path, 'Duplicate value'))
        lt = s.get('x-kubernetes-list-type')
        if lt in ('set', 'map'):
            keys = s.get('x-kubernetes-list-map-keys') or []
            seen = set()
            for i, e in enumerate(v):
                k = repr(tuple((e or {}).get(x) for x in keys)) if lt == 'map' and isinstance(e, dict) else repr(e)
                if k in seen:
                    shown = {x: e.get(x) for x in keys} if lt == 'map' and isinstance(e, dict) else e
                    errs.append(('%s[%d]' % (path, i), 'Duplicate value: %s' % json.dumps(shown)))
                seen.add(k)
        items = s.get('items')
        if isinstance(items, dict):
            for i, e in enumerate(v):
                if e is None and 'default' in items:
                    v[i] = e = copy.deepcopy(items['default'])
                _walk(e, items, '%s[%d]' % (path, i), errs, unknown, None)
    if isinstance(v, dict):
        props = s.get('properties')
        addl = s.get('additionalProperties')
        preserve = s.get('x-kubernetes-preserve-unknown-fields') or s.get('x-kubernetes-embedded-resource')
        if props is not None or isinstance(addl, dict):
            props = props or {}
            for k in list(v.keys()):
                if k in props:
                    continue
                if isinstance(addl, dict):
                    _walk(v[k], addl, '%s.%s' % (path, k), errs, unknown, None)
                elif not preserve and addl is not True:
                    unknown.append('%s.%s' % (path, k))
                    del v[k]
            for k, sub in props.items():
                _default(v, k, sub)
                if k in v:
                    _walk(v[k], sub, '%s.%s' % (path, k), errs, unknown,
                          old.get(k) if isinstance(old, dict) else None)
        elif t == 'object' and not preserve and addl is None and not s.get('x-kubernetes-int-or-string'):
            # an object without properties and without preserve-unknown-fields prunes everything
            for k in list(v.keys()):
                unknown.append('%s.%s' % (path, k))
                del v[k]
        for k in s.get('required') or []:
            if k not in v:
                errs.append(('%s.%s' % (path, k), 'Required value'))
        if 'minProperties' in s and len(v) < s['minProperties']:
            errs.append((path, 'Invalid value: %d: %s in body should have at least %d properties' % (len(v), path, s['minProperties'])))
        if 'maxProperties' in s and len(v) > s['maxProperties']:
            errs.append((path, 'Too many: %d: must have at most %d items' % (len(v), s['maxProperties'])))
    _cel(v, s, path, errs, old)


def _cel(v, s, path, errs, old):
    for rule in s.get('x-kubernetes-validations') or []:
        expr = rule.get('rule', '')
        if 'oldSelf' in expr and old is None:
            continue      # transition rules only run on updates
        try:
            ok = CEL(expr).eval({'self': v, 'oldSelf': old})
        except CelUnsupported as e:
            if expr not in _WARNED:
                _WARNED.add(expr)
                sys.stderr.write('[sim] x-kubernetes-validations rule not enforced (outside the CEL subset: %s): %s\n'
                                 % (e, expr))
            continue
        except CelError as e:
            errs.append((path, 'Invalid value: "object": %s' % e))
            continue
        if ok is not True:
            msg = rule.get('message') or 'failed rule: %s' % expr
            fp = path + (rule.get('fieldPath') or '')
            errs.append((fp.lstrip('.'), 'Invalid value: "%s": %s' % ('object' if isinstance(v, dict) else type(v).__name__, msg)))


# ---- a small CEL subset -------------------------------------------------------
class CelUnsupported(Exception):
    pass


class CelError(Exception):
    pass


_TOK = re.compile(r'\s*(?:(\d+\.\d+|\d+u?)|("(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\')|([A-Za-z_][A-Za-z0-9_]*)|(&&|\|\||==|!=|<=|>=|[-+*/%<>!?:.,()\[\]{}]))')


def _tokens(src):
    pos, out = 0, []
    src = src.strip()
    while pos < len(src):
        m = _TOK.match(src, pos)
        if not m or m.end() == pos:
            raise CelUnsupported(src[pos:])
        num, s, ident, op = m.groups()
        if num is not None:
            out.append(('num', float(num) if '.' in num else int(num.rstrip('u'))))
        elif s is not None:
            out.append(('str', bytes(s[1:-1], 'utf-8').decode('unicode_escape')))
        elif ident is not None:
            out.append(('id', ident))
        else:
            out.append(('op', op))
        pos = m.end()
        while pos < len(src) and src[pos].isspace():
            pos += 1
    out.append(('end', None))
    return out


_MISSING = object()


class CEL:
    def __init__(self, src):
        self.t = _tokens(src)
        self.i = 0
        self.ast = self.cond()
        if self.t[self.i][0] != 'end':
            raise CelUnsupported('trailing tokens')

    def peek(self):
        return self.t[self.i]

    def take(self, val=None):
        tok = self.t[self.i]
        if val is not None and tok[1] != val:
            raise CelUnsupported('expected %s' % val)
        self.i += 1
        return tok

    def cond(self):
        c = self.orx()
        if self.peek() == ('op', '?'):
            self.take()
            a = self.cond()
            self.take(':')
            b = self.cond()
            return ('?', c, a, b)
        return c

    def orx(self):
        e = self.andx()
        while self.peek() == ('op', '||'):
            self.take()
            e = ('||', e, self.andx())
        return e

    def andx(self):
        e = self.rel()
        while self.peek() == ('op', '&&'):
            self.take()
            e = ('&&', e, self.rel())
        return e

    def rel(self):
        e = self.add()
        while self.peek()[1] in ('==', '!=', '<', '<=', '>', '>=', 'in') and self.peek()[0] in ('op', 'id'):
            op = self.take()[1]
            e = (op, e, self.add())
        return e

    def add(self):
        e = self.mul()
        while self.peek() in (('op', '+'), ('op', '-')):
            op = self.take()[1]
            e = (op, e, self.mul())
        return e

    def mul(self):
        e = self.unary()
        while self.peek() in (('op', '*'), ('op', '/'), ('op', '%')):
            op = self.take()[1]
            e = (op, e, self.unary())
        return e

    def unary(self):
        if self.peek() == ('op', '!'):
            self.take()
            return ('not', self.unary())
        if self.peek() == ('op', '-'):
            self.take()
            return ('neg', self.unary())
        return self.postfix()

    def args(self):
        out = []
        self.take('(')
        if self.peek() != ('op', ')'):
            out.append(self.cond())
            while self.peek() == ('op', ','):
                self.take()
                out.append(self.cond())
        self.take(')')
        return out

    def postfix(self):
        e = self.primary()
        while True:
            if self.peek() == ('op', '.'):
                self.take()
                name = self.take()[1]
                if self.peek() == ('op', '('):
                    e = ('call', name, e, self.args())
                else:
                    e = ('field', e, name)
            elif self.peek() == ('op', '['):
                self.take()
                idx = self.cond()
                self.take(']')
                e = ('index', e, idx)
            else:
                return e

    def primary(self):
        kind, val = self.take()
        if kind in ('num', 'str'):
            return ('lit', val)
        if kind == 'id':
            if val in ('true', 'false'):
                return ('lit', val == 'true')
            if val == 'null':
                return ('lit', None)
            if self.peek() == ('op', '('):
                return ('call', val, None, self.args())
            return ('var', val)
        if val == '(':
            e = self.cond()
            self.take(')')
            return e
        if val == '[':
            items = []
            if self.peek() != ('op', ']'):
                items.append(self.cond())
                while self.peek() == ('op', ','):
                    self.take()
                    items.append(self.cond())
            self.take(']')
            return ('list', items)
        raise CelUnsupported('unexpected %r' % (val,))

    def eval(self, env):
        return self.ev(self.ast, env)

    def ev(self, n, env):
        op = n[0]
        if op == 'lit':
            return n[1]
        if op == 'var':
            if n[1] not in env:
                raise CelUnsupported('unknown variable %s' % n[1])
            return env[n[1]]
        if op == 'list':
            return [self.ev(x, env) for x in n[1]]
        if op == 'field':
            base = self.ev(n[1], env)
            if not isinstance(base, dict) or n[2] not in base:
                raise CelError('no such key: %s' % n[2])
            return base[n[2]]
        if op == 'index':
            base, idx = self.ev(n[1], env), self.ev(n[2], env)
            try:
                return base[idx]
            except (KeyError, IndexError, TypeError):
                raise CelError('no such key: %s' % idx)
        if op == '?':
            return self.ev(n[2], env) if self.ev(n[1], env) is True else self.ev(n[3], env)
        if op == '&&':
            a = self.ev(n[1], env)
            return a is True and self.ev(n[2], env) is True
        if op == '||':
            a = self.ev(n[1], env)
            return a is True or self.ev(n[2], env) is True
        if op == 'not':
            return not self.ev(n[1], env)
        if op == 'neg':
            return -self.ev(n[1], env)
        if op == 'call':
            return self.call(n, env)
        a, b = self.ev(n[1], env), self.ev(n[2], env)
        try:
            if op == '==':
                return a == b
            if op == '!=':
                return a != b
            if op == '<':
                return a < b
            if op == '<=':
                return a <= b
            if op == '>':
                return a > b
            if op == '>=':
                return a >= b
            if op == 'in':
                return a in b
            if op == '+':
                return a + b
            if op == '-':
                return a - b
            if op == '*':
                return a * b
            if op == '/':
                if b == 0:
                    raise CelError('division by zero')
                return int(a / b) if isinstance(a, int) and isinstance(b, int) else a / b
            if op == '%':
                if b == 0:
                    raise CelError('modulus by zero')
                return int(__import__('math').fmod(a, b))
        except TypeError:
            raise CelError('no such overload')
        raise CelUnsupported(op)

    def call(self, n, env):
        _, name, target, args = n
        if name == 'has' and target is None:
            f = args[0]
            if f[0] != 'field':
                raise CelUnsupported('has() needs a field')
            base = self.ev(f[1], env)
            return isinstance(base, dict) and f[2] in base
        if name in ('all', 'exists', 'exists_one', 'filter', 'map') and target is not None:
            coll = self.ev(target, env)
            var = args[0]
            if var[0] != 'var':
                raise CelUnsupported('macro variable')
            elems = list(coll.keys()) if isinstance(coll, dict) else list(coll)
            res = []
            for e in elems:
                sub = dict(env)
                sub[var[1]] = e
                res.append(self.ev(args[1], sub))
            if name == 'all':
                return all(r is True for r in res)
            if name == 'exists':
                return any(r is True for r in res)
            if name == 'exists_one':
                return sum(1 for r in res if r is True) == 1
            if name == 'filter':
                return [e for e, r in zip(elems, res) if r is True]
            return res
        vals = [self.ev(a, env) for a in args]
        t = self.ev(target, env) if target is not None else None
        if name == 'size':
            x = t if target is not None else vals[0]
            return len(x)
        if name in ('int', 'double', 'string') and target is None:
            return {'int': int, 'double': float, 'string': str}[name](vals[0])
        if name == 'startsWith':
            return t.startswith(vals[0])
        if name == 'endsWith':
            return t.endswith(vals[0])
        if name == 'contains':
            return vals[0] in t
        if name == 'matches':
            return re.search(vals[0], t) is not None
        raise CelUnsupported('function %s' % name)

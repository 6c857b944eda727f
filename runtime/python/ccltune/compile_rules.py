"""Which collectives of a post-grad FX graph `ccltune.torch.enable()` rewrites, and why not.

No torch here: the rules read a graph through a small `View` (an op's printed name, a node's
arguments and users, a tensor's dtype / shape / layout), so CI checks the pattern tables, the
argument mapping, eps extraction and every near-miss reason without PyTorch.
`compile_pass.py` is the torch side: it reads torch.fx nodes through `FxView`, calls
`plan_graph`, and applies the plan.

What is matched (Inductor's post-grad graphs are functional, decomposed ATen):

    ar  = _c10d_functional.all_reduce(partial, "sum", group)   # any sum all-reduce of a
    sum = _c10d_functional.wait_tensor(ar)                     # served group, its sole user
    s   = aten.add(sum, residual)          # either order; s may have any other users
    y   = RMSNorm(s) * weight              # one of RMSNORM_FORMS, eps a constant

becomes `out, s = ccltune.group_all_reduce_residual_rmsnorm(partial, residual, weight, eps,
group)` (residual updated in place where Inductor's reinplacing allows). Every other
all-reduce, all-gather and reduce-scatter of a served group becomes the ccltune op of the
same name and arguments (`PLAIN_OPS`).
"""
import collections

# Collectives as str(OpOverload) prints them, with their ccltune replacement (same arguments,
# same order, no wait: the ccltune ops are ordered on the stream they run on).
ALL_REDUCE = "_c10d_functional.all_reduce.default"        # (input, reduce_op, group_name)
ALL_GATHER = "_c10d_functional.all_gather_into_tensor.default"  # (input, group_size, group_name)
REDUCE_SCATTER = "_c10d_functional.reduce_scatter_tensor.default"  # (input, op, size, group_name)
WAIT = "_c10d_functional.wait_tensor.default"
PLAIN_OPS = {ALL_REDUCE: "ccltune.group_all_reduce", ALL_GATHER: "ccltune.group_all_gather",
             REDUCE_SCATTER: "ccltune.group_reduce_scatter"}
KINDS = {ALL_REDUCE: "all_reduce", ALL_GATHER: "all_gather", REDUCE_SCATTER: "reduce_scatter"}
GROUP_ARG = {ALL_REDUCE: 2, ALL_GATHER: 2, REDUCE_SCATTER: 3}   # index of group_name
FUSED_OP = "ccltune.group_all_reduce_residual_rmsnorm"  # (input, residual, weight, eps, group_name)
FUSED_ARGS = ("input", "residual", "weight", "eps", "group_name")
# Where pooled buffers are arranged (plan_pool): the mm that writes its result straight into
# the input's pooled slot, and the views between it and the all-reduce.
MM = "aten.mm.default"
VIEWS = ("aten.view.default", "aten._unsafe_view.default", "aten.reshape.default")
POOL_POLICIES = ("auto", "always", "never")

# The element-wise ATen ops the norm is decomposed into.
ADD = ("aten.add.Tensor", "aten.add.Scalar")
MUL, DIV = "aten.mul.Tensor", "aten.div.Tensor"
POW = "aten.pow.Tensor_Scalar"
MEAN, SUM = "aten.mean.dim", "aten.sum.dim_IntList"
RSQRT, SQRT, RECIPROCAL = "aten.rsqrt.default", "aten.sqrt.default", "aten.reciprocal.default"
CONVERTS = ("prims.convert_element_type.default", "aten._to_copy.default")
FUSED_RMS_NORM = "aten._fused_rms_norm.default"  # (input, normalized_shape, weight, eps)
RMS_NORM = "aten.rms_norm.default"               # the same arguments, one result
GETITEM = "getitem"

RMSNORM_FORMS = (
    "written out (Llama, Qwen, Mistral): x = s.float(); x * rsqrt(x.pow(2).mean(-1, keepdim) + eps),"
    " .to(dtype), then weight * that",
    "F.rms_norm / nn.RMSNorm decomposed: the same, times weight in fp32, then .to(dtype)",
    "aten._fused_rms_norm(s, [hidden], weight, eps) or aten.rms_norm kept whole",
    "variants: x * x for the square, sum / hidden for the mean, 1 / sqrt or x / sqrt(...)",
)

# c10d functional reduce-op strings -> the NCCL op libccltune is called with (_lib.NCCL_OPS).
REDUCE_OPS = {"sum": "sum", "avg": "avg", "product": "prod", "min": "min", "max": "max"}
COLLECTIVE_DTYPES = ("float32", "float16", "bfloat16", "int32", "int8")  # _lib.NCCL_TYPES
FUSED_DTYPES = ("float32", "float16", "bfloat16")
# ccltuneAllReduceResidualRmsNorm's argument rules (runtime/epilogue_call.cc).
HIDDEN_MULTIPLE, MAX_HIDDEN, ALIGN_BYTES = 8, 16384, 16
FP32_EPS = 1.1920928955078125e-07  # F.rms_norm's eps=None: torch.finfo(torch.float32).eps

TensorFacts = collections.namedtuple("TensorFacts", "dtype shape contiguous offset_bytes")
TensorFacts.__doc__ = ("What the rules need of a node's tensor: dtype name ('bfloat16'), shape "
                       "(an int per dim, None where symbolic), contiguity, storage offset in bytes")


class View:
    """How the rules read a graph. This default reads plain objects (the unit test's):
    `target` a printed op name, `args`, `kwargs`, `users` (ordered), `name`, and
    `meta["tensor"]` a TensorFacts. compile_pass.FxView reads torch.fx nodes."""

    def target(self, n):
        t = getattr(n, "target", None)
        return t if isinstance(t, str) else None

    def args(self, n):
        return tuple(n.args)

    def kwargs(self, n):
        return dict(n.kwargs)

    def users(self, n):
        return list(n.users)

    def name(self, n):
        return n.name

    def tensor(self, n):
        return n.meta.get("tensor")

    def is_node(self, x):
        return hasattr(x, "users") and hasattr(x, "args")

    def dtype(self, x):
        """A dtype argument (convert_element_type's) as a name, None if it is not one."""
        return x if isinstance(x, str) else None


class Miss(Exception):
    """A candidate not rewritten; str() is the reason reported."""


FusedMatch = collections.namedtuple(
    "FusedMatch", "collective wait add output input residual weight eps group dtype hidden "
                  "tokens form chain")
FusedMatch.__doc__ = ("An all-reduce + residual add + RMSNorm to replace. `output` (the norm's "
                      "result) and `add` (the new residual) take the fused op's two results; "
                      "`chain` is every node the rewrite removes (collective, wait, add, norm).")
PoolPlan = collections.namedtuple("PoolPlan", "match mm residual_from")
PoolPlan.__doc__ = ("Pooled buffers for one fused match: `mm`, the aten.mm whose result becomes "
                    "the input (written straight into its slot), or None (the input is copied "
                    "into the slot); `residual_from`, the earlier FusedMatch whose new residual "
                    "(already in a slot) this one updates in place, or None (copied into one).")
PlainMatch = collections.namedtuple("PlainMatch", "kind collective wait op args group")
PlainMatch.__doc__ = "A collective + wait_tensor to replace by `op` called with `args`."
NearMiss = collections.namedtuple("NearMiss", "kind node reason")
NearMiss.__doc__ = "A collective left as it is (or not fused), and why."


class Plan:
    """What plan_graph decided for one graph."""

    def __init__(self):
        self.fused, self.plain = [], []
        self.not_fused = []  # all-reduces rewritten (or left) unfused: why not fused
        self.left = []       # collectives left as they are: why
        self.pooled = []     # PoolPlan per fused match that gets pooled buffers (plan_pool)
        self.not_pooled = []  # NearMiss per fused match that does not: why

    def summary(self, view):
        """One line: counts, then each fused match and each near-miss with its reason."""
        kinds = collections.Counter(m.kind for m in self.plain)
        parts = ["fused %d all_reduce+add+rms_norm" % len(self.fused)]
        parts += ["%d %s -> ccltune" % (kinds[k], k) for k in sorted(kinds)]
        for m in self.fused:
            parts.append("fused %s: %s hidden=%d eps=%g group=%s (%s)"
                         % (view.name(m.collective), m.dtype, m.hidden, m.eps, m.group, m.form))
        if self.pooled:
            mm = sum(1 for p in self.pooled if p.mm is not None)
            chained = sum(1 for p in self.pooled if p.residual_from is not None)
            parts.append("pooled buffers for %d (input from mm %d, copied %d; residual chained "
                         "%d, copied %d)" % (len(self.pooled), mm, len(self.pooled) - mm, chained,
                                             len(self.pooled) - chained))
        for nm in self.not_pooled:
            parts.append("not pooled %s: %s" % (nm.node, nm.reason))
        for nm in self.not_fused:
            parts.append("not fused %s: %s" % (nm.node, nm.reason))
        for nm in self.left:
            parts.append("left %s %s: %s" % (nm.kind, nm.node, nm.reason))
        return "; ".join(parts)


def plan_graph(view, nodes, served, fuse=True, collectives=True):
    """The rewrites for a graph's `nodes` (in graph order). `served`: group name -> world
    size of the groups enable() serves. `fuse` / `collectives`: which rewrites to make.
    A match's operands may be nodes an earlier match replaces (its norm output, its new
    residual): the applier maps them through its replacements."""
    plan = Plan()
    claimed = set()  # ids of the nodes fused matches remove
    for n in nodes:
        target = view.target(n)
        if target in PLAIN_OPS:
            _plan_collective(view, n, target, served, fuse, collectives, plan, claimed)
    return plan


def _plan_collective(view, n, target, served, fuse, collectives, plan, claimed):
    kind, name = KINDS[target], view.name(n)
    group = _arg(view, n, GROUP_ARG[target], "group_name")
    if group not in served:
        plan.left.append(NearMiss(kind, name, "group %r is not served (enable() serves %s)"
                                  % (group, sorted(served) or "none")))
        return
    try:
        wait = _wait_of(view, n)
    except Miss as e:
        plan.left.append(NearMiss(kind, name, str(e)))
        return
    if target == ALL_REDUCE and fuse:
        try:
            m = match_fused(view, n, wait, group)
            if any(id(c) in claimed for c in m.chain):
                raise Miss("its residual add is already part of another fused rewrite")
            claimed.update(id(c) for c in m.chain)
            plan.fused.append(m)
            return
        except Miss as e:
            plan.not_fused.append(NearMiss(kind, name, str(e)))
    if not collectives:
        plan.left.append(NearMiss(kind, name, "collective rewrites are off (enable(collectives="
                                              "False))"))
        return
    try:
        plan.plain.append(match_plain(view, n, wait, target, served[group]))
    except Miss as e:
        plan.left.append(NearMiss(kind, name, str(e)))


def _arg(view, n, i, name):
    args = view.args(n)
    return args[i] if i < len(args) else view.kwargs(n).get(name)


def _wait_of(view, n):
    users = view.users(n)
    if len(users) != 1 or view.target(users[0]) != WAIT:
        raise Miss("its result is read by %s, not by one wait_tensor"
                   % (_names(view, users) or "nothing"))
    return users[0]


def _names(view, nodes):
    return ", ".join("%s (%s)" % (view.name(u), view.target(u) or "?") for u in nodes)


def match_plain(view, n, wait, target, world):
    """The ccltune op replacing collective `n` + `wait`, or Miss with the reason."""
    facts = view.tensor(_arg(view, n, 0, "input"))
    if facts is None:
        raise Miss("no tensor metadata on its input")
    if facts.dtype not in COLLECTIVE_DTYPES:
        raise Miss("dtype %s: ccltune runs %s" % (facts.dtype, ", ".join(COLLECTIVE_DTYPES)))
    args = view.args(n)
    if target in (ALL_REDUCE, REDUCE_SCATTER) and args[1] not in REDUCE_OPS:
        raise Miss("reduce op %r has no ccltune equivalent (%s)"
                   % (args[1], ", ".join(sorted(REDUCE_OPS))))
    if target in (ALL_GATHER, REDUCE_SCATTER):
        size = args[1] if target == ALL_GATHER else args[2]
        if size != world:
            raise Miss("group_size %s, but the group has %d ranks" % (size, world))
    if target == REDUCE_SCATTER:
        rows = facts.shape[0] if facts.shape else None
        if rows is None or rows % world:
            raise Miss("dim 0 (%s) is not a known multiple of %d ranks" % (rows, world))
    return PlainMatch(KINDS[target], n, wait, PLAIN_OPS[target], args,
                      args[GROUP_ARG[target]])


def match_fused(view, ar, wait, group):
    """The fused rewrite of all-reduce `ar` (+ `wait`), or Miss with the reason."""
    op = view.args(ar)[1]
    if op != "sum":
        raise Miss("reduce op %s: the fused op sums" % op)
    add, residual = _residual_add(view, ar, wait)
    facts = view.tensor(add)
    output, weight, eps, form, chain = match_rmsnorm(view, add, facts)
    out = view.tensor(output)
    if out is None or (out.dtype, out.shape) != (facts.dtype, facts.shape):
        raise Miss("the norm's output is %s, not the sum's %s %s (weight of another dtype?)"
                   % (out and "%s %s" % (out.dtype, out.shape), facts.dtype, facts.shape))
    hidden = facts.shape[-1]
    _qualify(view, facts, hidden, (("input", view.args(ar)[0]), ("residual", residual),
                                   ("weight", weight)))
    leading = facts.shape[:-1]
    tokens = None if None in leading else _product(leading)
    return FusedMatch(ar, wait, add, output, view.args(ar)[0], residual, weight, eps, group,
                      facts.dtype, hidden, tokens, form, [ar, wait, add] + chain)


def fused_kwargs(m):
    """The fused op's arguments for a match, by name (FUSED_ARGS)."""
    return dict(zip(FUSED_ARGS, (m.input, m.residual, m.weight, m.eps, m.group)))


def _product(dims):
    p = 1
    for d in dims:
        p *= d
    return p


def _residual_add(view, ar, wait):
    users = view.users(wait)
    if len(users) != 1:
        raise Miss("the all-reduced sum is used by %d nodes (%s); the fused op returns only "
                   "the normalised output and the new residual"
                   % (len(users), _names(view, users) or "none"))
    add = users[0]
    if view.target(add) != ADD[0]:
        raise Miss("the sum is followed by %s, not a residual add" % view.target(add))
    a = view.args(add)
    if len(a) != 2 or view.kwargs(add).get("alpha", 1) != 1 or not all(map(view.is_node, a)):
        raise Miss("the add is not sum + residual (scaled, or a constant operand)")
    residual = a[1] if a[0] is wait else a[0]
    if residual is wait:
        raise Miss("the add adds the sum to itself")
    if residual is view.args(ar)[0]:
        raise Miss("the residual is the all-reduce's own input")
    s, r, t = view.tensor(add), view.tensor(residual), view.tensor(wait)
    if None in (s, r, t) or not (s.shape == r.shape == t.shape and s.dtype == r.dtype == t.dtype):
        raise Miss("sum and residual differ in shape or dtype (%s, %s)"
                   % (t and (t.dtype, t.shape), r and (r.dtype, r.shape)))
    return add, residual


def _qualify(view, facts, hidden, operands):
    if facts.dtype not in FUSED_DTYPES:
        raise Miss("dtype %s: the fused op takes %s" % (facts.dtype, ", ".join(FUSED_DTYPES)))
    if hidden is None:
        raise Miss("the hidden size (last dim) is symbolic")
    if hidden % HIDDEN_MULTIPLE or hidden > MAX_HIDDEN:
        raise Miss("hidden %d: the fused op takes multiples of %d up to %d"
                   % (hidden, HIDDEN_MULTIPLE, MAX_HIDDEN))
    for what, n in operands:
        t = view.tensor(n)
        if t is None or not t.contiguous:
            raise Miss("%s is not contiguous" % what)
        if t.offset_bytes is None or t.offset_bytes % ALIGN_BYTES:
            raise Miss("%s starts %s bytes into its storage, not %d-byte aligned"
                       % (what, t.offset_bytes, ALIGN_BYTES))
        if what == "weight" and (t.shape != (hidden,) or t.dtype != facts.dtype):
            raise Miss("weight is %s %s, the fused op needs %s (%d,)"
                       % (t.dtype, t.shape, facts.dtype, hidden))


def match_rmsnorm(view, s, facts):
    """The RMSNorm reading the residual sum `s` (TensorFacts `facts`): (output, weight, eps,
    form, chain nodes), or Miss with the reason of the nearest candidate."""
    users = view.users(s)
    for u in users:
        if view.target(u) in (FUSED_RMS_NORM, RMS_NORM) and view.args(u)[0] is s:
            return _match_whole_norm(view, u, facts)
    starts = [u for u in users if _converts(view, u, s, "float32")] + [s]
    best = None
    for x in starts:
        square = next((u for u in view.users(x) if _is_square(view, u, x)), None)
        if square is None:
            continue
        try:
            return _match_written(view, s, x, square, facts)
        except Miss as e:
            best = best or e
    raise best or Miss("the residual sum feeds no RMSNorm (no square of it)")


def _converts(view, n, src, dtype):
    if view.target(n) not in CONVERTS or view.args(n)[0] is not src:
        return False
    a = view.args(n)
    to = a[1] if len(a) > 1 else view.kwargs(n).get("dtype")
    return view.dtype(to) == dtype


def _is_square(view, n, x):
    t, a = view.target(n), view.args(n)
    if t == POW:
        return a[0] is x and a[1] in (2, 2.0)
    return t == MUL and len(a) == 2 and a[0] is x and a[1] is x


def _sole_user(view, n, what):
    users = view.users(n)
    if len(users) != 1:
        raise Miss("%s is used by %d nodes (%s), not only by the norm"
                   % (what, len(users), _names(view, users) or "none"))
    return users[0]


def _match_written(view, s, x, square, facts):
    chain = [] if x is s else [x]
    mean, reduce_nodes = _match_mean(view, square, facts)
    eps_add = _sole_user(view, mean, "the mean of squares")
    eps = _eps_of(view, eps_add, mean)
    normed, inv_nodes = _match_inverse_root(view, eps_add, x)
    chain += [square] + reduce_nodes + [eps_add] + inv_nodes + [normed]
    if x is not s:
        others = [u for u in view.users(x) if u is not square and u is not normed]
        if others:
            raise Miss("the upcast sum is also used by %s" % _names(view, others))
    output, weight, tail = _match_weight(view, normed, facts.dtype)
    if view.target(tail[0]) in CONVERTS:
        where = "weight after the cast back"    # LlamaRMSNorm: weight * x.to(dtype)
    else:
        where = "weight before the cast back" if len(tail) == 2 else "weight"  # F.rms_norm
    form = "written out (%s%s)" % ("upcast, " if x is not s else "", where)
    return output, weight, eps, form, chain + tail


def _match_mean(view, square, facts):
    red = _sole_user(view, square, "the square")
    t = view.target(red)
    if t not in (MEAN, SUM):
        raise Miss("the square is reduced by %s, not a mean" % t)
    dims, keepdim = _reduce_args(view, red)
    ndim = len(facts.shape)
    if not isinstance(dims, (list, tuple)) or len(dims) != 1 or dims[0] not in (-1, ndim - 1):
        raise Miss("the norm reduces over dims %s of a %d-d tensor, not the last one only"
                   % (list(dims) if isinstance(dims, (list, tuple)) else dims, ndim))
    if not keepdim:
        raise Miss("the mean drops the reduced dim (keepdim=False)")
    if t == MEAN:
        return red, [red]
    scale = _sole_user(view, red, "the sum of squares")
    a, hidden = view.args(scale), facts.shape[-1]
    if not (len(a) == 2 and a[0] is red and (
            (view.target(scale) == DIV and a[1] == hidden) or
            (view.target(scale) == MUL and _close(a[1], 1.0 / hidden if hidden else None)))):
        raise Miss("the sum of squares is not divided by the hidden size")
    return scale, [red, scale]


def _reduce_args(view, red):
    a, kw = view.args(red), view.kwargs(red)
    dims = a[1] if len(a) > 1 else kw.get("dim")
    keepdim = a[2] if len(a) > 2 else kw.get("keepdim", False)
    return dims, keepdim


def _close(a, b):
    return isinstance(a, (int, float)) and b is not None and abs(a - b) <= 1e-12 * abs(b)


def _eps_of(view, eps_add, mean):
    if view.target(eps_add) not in ADD:
        raise Miss("the mean of squares is followed by %s, not + eps" % view.target(eps_add))
    a = view.args(eps_add)
    if len(a) != 2 or view.kwargs(eps_add).get("alpha", 1) != 1:
        raise Miss("the eps add is scaled")
    eps = a[1] if a[0] is mean else a[0]
    if view.is_node(eps):
        raise Miss("eps is not a constant (a graph input: compile with dynamic=False or "
                   "torch._dynamo.config.specialize_float=True)")
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or eps < 0:
        raise Miss("eps %r is not a non-negative number" % (eps,))
    return float(eps)


def _match_inverse_root(view, eps_add, x):
    """x * rsqrt(v), x * (1 / sqrt(v)), or x / sqrt(v): (the product, nodes between)."""
    root = _sole_user(view, eps_add, "mean + eps")
    t = view.target(root)
    if t == RSQRT:
        inv, nodes = root, [root]
    elif t == SQRT:
        nxt = _sole_user(view, root, "sqrt(mean + eps)")
        if view.target(nxt) == DIV and view.args(nxt) == (x, root):
            return nxt, [root]
        if view.target(nxt) != RECIPROCAL:
            raise Miss("sqrt(mean + eps) is followed by %s" % view.target(nxt))
        inv, nodes = nxt, [root, nxt]
    else:
        raise Miss("mean + eps is followed by %s, not rsqrt or sqrt" % t)
    normed = _sole_user(view, inv, "the inverse root")
    a = view.args(normed)
    if view.target(normed) != MUL or len(a) != 2 or set(map(id, a)) != {id(x), id(inv)}:
        raise Miss("the inverse root does not multiply the summed input (the norm is over "
                   "another tensor)")
    return normed, nodes


def _match_weight(view, normed, dtype):
    """weight * normed.to(dtype), or (normed * weight).to(dtype): (output, weight, nodes)."""
    u = _sole_user(view, normed, "the normalised value")
    if dtype != "float32" and _converts(view, u, normed, dtype):
        y = _sole_user(view, u, "the normalised value cast back")
        return y, _weight_operand(view, y, u), [u, y]
    if view.target(u) != MUL:
        raise Miss("the normalised value is not multiplied by a weight (%s follows)"
                   % view.target(u))
    weight = _weight_operand(view, u, normed)
    facts = view.tensor(u)
    if facts is not None and facts.dtype == dtype:
        return u, weight, [u]
    y = _sole_user(view, u, "the weighted value")
    if not _converts(view, y, u, dtype):
        raise Miss("the weighted norm is not cast back to %s" % dtype)
    return y, weight, [u, y]


def _weight_operand(view, mul, value):
    a = view.args(mul)
    if view.target(mul) != MUL or len(a) != 2 or value not in a:
        raise Miss("the normalised value is followed by %s, not a weight product"
                   % view.target(mul))
    w = a[1] if a[0] is value else a[0]
    if not view.is_node(w):
        raise Miss("the norm is scaled by the constant %r, not a weight" % (w,))
    return w


def _match_whole_norm(view, node, facts):
    """aten.rms_norm / aten._fused_rms_norm (input, normalized_shape, weight, eps)."""
    a, kw = view.args(node), view.kwargs(node)
    shape = a[1] if len(a) > 1 else kw.get("normalized_shape")
    weight = a[2] if len(a) > 2 else kw.get("weight")
    eps = a[3] if len(a) > 3 else kw.get("eps")
    if list(shape) != [facts.shape[-1]]:
        raise Miss("the norm is over %s, not the last dim only" % (list(shape),))
    if weight is None:
        raise Miss("the norm has no weight")
    if view.is_node(eps):
        raise Miss("eps is not a constant")
    eps = FP32_EPS if eps is None else eps
    if view.target(node) == RMS_NORM:
        return node, weight, float(eps), "aten.rms_norm", [node]
    getters = view.users(node)
    outs = [g for g in getters if view.target(g) == GETITEM and view.args(g)[1] == 0]
    rest = [g for g in getters if g not in outs and view.users(g)]
    if len(outs) != 1 or rest:
        raise Miss("_fused_rms_norm's inverse rms is used too")
    return outs[0], weight, float(eps), "aten._fused_rms_norm", [node] + getters


# --- pooled buffers ----------------------------------------------------------------------
# Fused kernels reach every rank's input, out and residual at one offset of the runtime's
# pool (runtime/dispatch_epilogue.cc); with other buffers the runtime runs the fastest unfused
# choice. Like PyTorch's own one-shot lowering, which has the producer of an all-reduce's
# input write into a symmetric-memory buffer, the pass gives each fused site persistent pooled
# slots: the row-parallel mm writes its result straight into the input slot (else the input is
# copied in), the fused op writes into an out slot, and the residual stream stays in a slot
# from one site to the next (copied in once, where a chain starts).


def plan_pool(view, fused, policy, refuse):
    """Which fused matches (graph order) get pooled buffers. `refuse(m)`: None where pooled
    buffers would run another choice than plain ones (or policy "always"), else why not.
    Fills nothing; returns (list of PoolPlan, list of NearMiss)."""
    if policy not in POOL_POLICIES:
        raise ValueError("pool=%r: allowed %s" % (policy, ", ".join(POOL_POLICIES)))
    pooled, misses, by_add = [], [], {}
    for m in fused:
        why = "pool='never'" if policy == "never" else None
        if why is None and m.tokens is None:
            why = "the token count is symbolic (a pooled slot has a fixed size; dynamic=False)"
        why = why or refuse(m)
        if why:
            misses.append(NearMiss("all_reduce", view.name(m.collective), why))
            continue
        prev = by_add.get(id(m.residual))
        chained = (prev if prev is not None and prev.group == m.group and _only_feeds(view, prev, m)
                   else None)
        p = PoolPlan(m, mm_producer(view, m.input), chained)
        pooled.append(p)
        by_add[id(m.add)] = m
    return pooled, misses


def mm_producer(view, x):
    """The aten.mm whose result reaches `x` through VIEWS only, every node on the way read by
    one node (so the mm can write into the slot without changing what anything else reads)."""
    n = x
    for _ in range(8):
        if len(view.users(n)) != 1:
            return None
        t = view.target(n)
        if t == MM:
            return n
        if t not in VIEWS:
            return None
        n = view.args(n)[0]
    return None


def _only_feeds(view, prev, m):
    """prev's new residual is read by m's residual add only (besides prev's own norm, which
    the rewrite removes): m may then update it in place, in prev's slot."""
    chain = set(map(id, prev.chain))
    others = [u for u in view.users(prev.add) if id(u) not in chain]
    return len(others) == 1 and others[0] is m.add

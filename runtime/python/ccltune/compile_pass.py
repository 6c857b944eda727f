"""ccltune.torch.enable(): ccltune's collectives inside torch.compile'd programs, no model changes.

enable() sets up a Communicator per served group and installs an Inductor post-grad pass
(`torch._inductor.config.post_grad_custom_post_pass`, chained after any pass already set,
with a uuid so the FX graph cache stays on). On each graph the pass asks compile_rules
which collectives to rewrite, then:

- all-reduce (functional collective + wait) -> residual add -> RMSNorm becomes
  `ccltune::group_all_reduce_residual_rmsnorm` (through auto_functionalized: Inductor's
  reinplacing updates the residual in place where nothing else reads it, else copies it);
- the other all-reduce / all-gather / reduce-scatter of served groups become
  `ccltune::group_all_reduce` / `group_all_gather` / `group_reduce_scatter`.

The ops take the c10d group name, not a communicator handle, so compiled code loaded from
the cache in another process finds its communicator. The runtime picks, per call and shape,
the tuned winner (fused or not) that applies to the buffers it is given. Fused kernels need
input, out and residual in the runtime's pool; buffers Inductor allocates are not, so where
pooled buffers would run another choice than plain ones (enable(pool="auto"), the default;
"always", "never") the pass arranges them, as PyTorch plans symmetric-memory inputs for its
own one-shot all-reduce: the site becomes `ccltune::group_all_reduce_residual_rmsnorm_into`
writing into a pooled out slot, the row-parallel mm producing its input becomes
`ccltune::pool_mm` writing straight into a pooled input slot (other producers: a copy into
it, `ccltune::pool_place`), and the residual stream stays in a pooled slot from one site to
the next (copied in once where a chain starts). Slot values the graph returns are cloned.
compile_pool.py says how slots are taken and checked; where none can be had the same graph
runs on ordinary tensors and the runtime's unfused choice. explain() reports both choices,
and per site whether and how the buffers were arranged, or why not.
"""
import collections
import contextlib
import hashlib
import logging
import operator

import torch
import torch._inductor.config
import torch.distributed as dist
from torch._inductor import custom_graph_pass as _cgp

from ccltune import _lib
from ccltune import compile_pool as cpool
from ccltune import compile_rules as rules
from ccltune import communicator as cm

log = logging.getLogger("ccltune.compile")
_served = {}   # c10d group name -> cm.Communicator
_reports = []  # GraphReport, oldest first
_state = {"pass": None, "saved": None}
calls = collections.Counter()  # op name -> eager invocations (capture counts, replays do not)


def _comm(group_name):
    c = _served.get(group_name)
    if c is None:
        raise RuntimeError("ccltune.torch: group %r is not served in this process (call "
                           "ccltune.torch.enable() for it first)" % group_name)
    return c


def _nccl_op(reduce_op):
    return _lib.NCCL_OPS[rules.REDUCE_OPS[reduce_op]]


# The ops the pass inserts: the functional collectives' own arguments (group by name).
@torch.library.custom_op("ccltune::group_all_reduce", mutates_args=())
def group_all_reduce(input: torch.Tensor, reduce_op: str, group_name: str) -> torch.Tensor:
    calls["group_all_reduce"] += 1
    x = input.contiguous()
    out = torch.empty_like(x)
    cm.run_all_reduce(x, out, _comm(group_name), _nccl_op(reduce_op))
    return out


@group_all_reduce.register_fake
def _(input, reduce_op, group_name):
    return input.new_empty(input.shape)


@torch.library.custom_op("ccltune::group_all_gather", mutates_args=())
def group_all_gather(input: torch.Tensor, group_size: int, group_name: str) -> torch.Tensor:
    calls["group_all_gather"] += 1
    return cm.run_all_gather(input.contiguous(), _comm(group_name))


@group_all_gather.register_fake
def _(input, group_size, group_name):
    return input.new_empty(cm.gathered_shape(input, group_size))


@torch.library.custom_op("ccltune::group_reduce_scatter", mutates_args=())
def group_reduce_scatter(input: torch.Tensor, reduce_op: str, group_size: int,
                         group_name: str) -> torch.Tensor:
    calls["group_reduce_scatter"] += 1
    return cm.run_reduce_scatter(input.contiguous(), _comm(group_name), _nccl_op(reduce_op))


@group_reduce_scatter.register_fake
def _(input, reduce_op, group_size, group_name):
    return input.new_empty(cm.scattered_shape(input, group_size))


@torch.library.custom_op("ccltune::group_all_reduce_residual_rmsnorm", mutates_args=("residual",))
def group_all_reduce_residual_rmsnorm(input: torch.Tensor, residual: torch.Tensor,
                                      weight: torch.Tensor, eps: float,
                                      group_name: str) -> torch.Tensor:
    """residual += all-reduce(input); returns RMSNorm(residual) * weight."""
    calls["group_all_reduce_residual_rmsnorm"] += 1
    out = torch.empty_like(residual)
    cm.run_rmsnorm(input.contiguous(), residual, weight.contiguous(), eps, _comm(group_name), out)
    return out


@group_all_reduce_residual_rmsnorm.register_fake
def _(input, residual, weight, eps, group_name):
    return residual.new_empty(residual.shape)


@torch.library.custom_op("ccltune::group_all_reduce_residual_rmsnorm_copy", mutates_args=())
def group_all_reduce_residual_rmsnorm_copy(input: torch.Tensor, residual: torch.Tensor,
                                           weight: torch.Tensor, eps: float,
                                           group_name: str) -> tuple[torch.Tensor, torch.Tensor]:
    """enable(residual="copy"): the same on a copy of residual; returns (out, new residual)."""
    calls["group_all_reduce_residual_rmsnorm"] += 1
    res = residual.clone(memory_format=torch.contiguous_format)
    out = torch.empty_like(res)
    cm.run_rmsnorm(input.contiguous(), res, weight.contiguous(), eps, _comm(group_name), out)
    return out, res


@group_all_reduce_residual_rmsnorm_copy.register_fake
def _(input, residual, weight, eps, group_name):
    return residual.new_empty(residual.shape), residual.new_empty(residual.shape)


@torch.library.custom_op("ccltune::group_all_reduce_residual_rmsnorm_into",
                         mutates_args=("residual", "out"))
def group_all_reduce_residual_rmsnorm_into(input: torch.Tensor, residual: torch.Tensor,
                                           out: torch.Tensor, weight: torch.Tensor, eps: float,
                                           group_name: str) -> None:
    """The fused op on buffers the pass arranged (pooled slots where it got them):
    residual += all-reduce(input); out = RMSNorm(residual) * weight."""
    calls["group_all_reduce_residual_rmsnorm"] += 1
    arranged = cpool.is_slot(input) and cpool.is_slot(residual) and cpool.is_slot(out)
    calls["pooled_arranged" if arranged else "pooled_not_arranged"] += 1
    cm.run_rmsnorm(input.contiguous(), residual, weight.contiguous(), eps, _comm(group_name),
                   out)


@group_all_reduce_residual_rmsnorm_into.register_fake
def _(input, residual, out, weight, eps, group_name):
    return None


class FxView(rules.View):
    """compile_rules' view of torch.fx nodes: printed op names, FakeTensor facts."""

    def target(self, n):
        if n.op != "call_function":
            return None
        if isinstance(n.target, torch._ops.OpOverload):
            return str(n.target)
        if n.target is operator.getitem:
            return rules.GETITEM
        return getattr(n.target, "__name__", str(n.target))

    def tensor(self, n):
        v = n.meta.get("val")
        if not isinstance(v, torch.Tensor):
            return None
        try:
            contiguous = bool(v.is_contiguous())
        except Exception:  # a symbolic layout it cannot decide without a guard
            contiguous = False
        offset = v.storage_offset()
        return rules.TensorFacts(self.dtype(v.dtype),
                                 tuple(d if isinstance(d, int) else None for d in v.shape),
                                 contiguous,
                                 offset * v.element_size() if isinstance(offset, int) else None)

    def is_node(self, x):
        return isinstance(x, torch.fx.Node)

    def dtype(self, x):
        return str(x).replace("torch.", "") if isinstance(x, torch.dtype) else None


class GraphReport:
    """What the pass did to one graph: `line` (also logged), the fused matches, the
    near-misses, and the collective / ccltune ops before and after."""

    def __init__(self, index, line, plan, before, after, fused, graphs):
        self.index, self.line = index, line
        self.fused = fused              # one dict per fused rewrite
        self.not_fused, self.left = plan.not_fused, plan.left
        self.ops_before, self.ops_after = before, after
        self.graph_before, self.graph_after = graphs

    def __str__(self):
        return "graph %d: %s" % (self.index, self.line)


def _op_name(n):
    if n.op != "call_function":
        return None
    t = n.target
    if t is torch.ops.higher_order.auto_functionalized:
        t = n.args[0]
    return str(t) if isinstance(t, torch._ops.OpOverload) else None


def op_counts(graph):
    """Collective and ccltune ops of a graph (auto_functionalized counted as its op)."""
    names = (_op_name(n) for n in graph.nodes)
    return collections.Counter(x for x in names if x and x.startswith(("_c10d_functional.",
                                                                        "ccltune.")))


def _fresh_val(val):
    """A new contiguous FakeTensor like `val` (its own storage, as the op allocates)."""
    if not isinstance(val, torch.Tensor):
        return val
    with torch._guards.detect_fake_mode([val]) or contextlib.nullcontext():
        return val.new_empty(val.shape)


def _set_val(node, like):
    node.meta["val"] = _fresh_val(like.meta.get("val"))
    if "tensor_meta" in like.meta and isinstance(node.meta["val"], torch.Tensor):
        from torch.fx.passes.shape_prop import _extract_tensor_metadata
        node.meta["tensor_meta"] = _extract_tensor_metadata(node.meta["val"])


def _resolve(x, replaced):
    while x in replaced:
        x = replaced[x]
    return x


def _erase(graph, nodes):
    order = {n: i for i, n in enumerate(graph.nodes)}
    for n in sorted(set(nodes), key=order.get, reverse=True):
        graph.erase_node(n)


def _call(graph, op, args, like):
    node = graph.call_function(op, args)
    _set_val(node, like)
    return node


def _apply_pooled(graph, p, replaced, site, policy):
    """One site on pooled slots (compile_rules.plan_pool's PoolPlan `p`)."""
    m = p.match
    kwargs = {k: _resolve(v, replaced) for k, v in rules.fused_kwargs(m).items()}
    tail = (m.group, site, policy)
    if p.mm is not None:  # the mm writes its result straight into the input slot
        with graph.inserting_before(p.mm):
            mm = graph.call_function(torch.ops.ccltune.pool_mm.default, tuple(p.mm.args) + tail)
        mm.meta.update(p.mm.meta)  # the same value: views after it keep their storage link
        p.mm.replace_all_uses_with(mm)
        graph.erase_node(p.mm)
    with graph.inserting_before(m.output):
        if p.mm is None:
            kwargs["input"] = _call(graph, torch.ops.ccltune.pool_place.default,
                                    (kwargs["input"], m.group, site, "input", policy), m.input)
        if p.residual_from is None:
            kwargs["residual"] = _call(graph, torch.ops.ccltune.pool_place.default,
                                       (kwargs["residual"], m.group, site, "residual", policy),
                                       m.add)
        out = _call(graph, torch.ops.ccltune.pool_slot.default,
                    (kwargs["residual"], m.group, site, "out", policy), m.output)
        from torch._higher_order_ops.auto_functionalize import auto_functionalized
        fused = graph.call_function(
            auto_functionalized, (torch.ops.ccltune.group_all_reduce_residual_rmsnorm_into.default,),
            dict(kwargs, out=out))
        res = graph.call_function(operator.getitem, (fused, 1))
        normed = graph.call_function(operator.getitem, (fused, 2))
    # Views made earlier keep the storage of the values replaced here: list both.
    slot_nodes = [m.output, m.add, out, kwargs["input"], kwargs["residual"]]
    _set_val(res, m.add)
    _set_val(normed, m.output)
    fused.meta["val"] = (None, res.meta["val"], normed.meta["val"])
    _rewire(graph, m, normed, res, replaced)
    return slot_nodes + [res, normed]


def _rewire(graph, m, out, res, replaced):
    chain = set(m.chain)
    m.output.replace_all_uses_with(out)
    m.add.replace_all_uses_with(res, delete_user_cb=lambda user: user not in chain)
    replaced.update({m.output: out, m.add: res})
    _erase(graph, m.chain)


def _storage(node):
    from torch.multiprocessing.reductions import StorageWeakRef
    v = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return StorageWeakRef(v.untyped_storage()) if isinstance(v, torch.Tensor) else None


def _clone_escaping(graph, slot_nodes):
    """Graph outputs whose memory is a slot (a slot value or a view of one, found by the
    FakeTensors' shared storage) become clones: a caller keeps outputs across calls, and
    the next call rewrites the slots."""
    slots = {_storage(n) for n in slot_nodes} - {None}
    out = next(n for n in reversed(graph.nodes) if n.op == "output")

    def fix(x):
        if isinstance(x, torch.fx.Node) and _storage(x) in slots:
            with graph.inserting_before(out):
                return _call(graph, torch.ops.aten.clone.default, (x,), x)
        return x
    out.args = torch.fx.node.map_aggregate(out.args, fix)


def _apply_fused(graph, m, replaced, residual_mode):
    kwargs = {k: _resolve(v, replaced) for k, v in rules.fused_kwargs(m).items()}
    with graph.inserting_before(m.output):
        if residual_mode == "copy":
            fused = graph.call_function(
                torch.ops.ccltune.group_all_reduce_residual_rmsnorm_copy.default,
                tuple(kwargs[k] for k in rules.FUSED_ARGS))
        else:  # residual updated in place where Inductor's reinplacing finds it free
            from torch._higher_order_ops.auto_functionalize import auto_functionalized
            fused = graph.call_function(
                auto_functionalized,
                (torch.ops.ccltune.group_all_reduce_residual_rmsnorm.default,), kwargs)
        out = graph.call_function(operator.getitem, (fused, 0))
        res = graph.call_function(operator.getitem, (fused, 1))
    _set_val(out, m.output)
    _set_val(res, m.add)
    fused.meta["val"] = (out.meta["val"], res.meta["val"])
    _rewire(graph, m, out, res, replaced)


def _apply_plain(graph, m, replaced):
    op = getattr(torch.ops.ccltune, m.op.split(".", 1)[1]).default
    args = tuple(_resolve(a, replaced) for a in m.collective.args)
    with graph.inserting_after(m.collective):
        new = graph.call_function(op, args)
    _set_val(new, m.wait)
    m.wait.replace_all_uses_with(new)
    replaced[m.wait] = new
    _erase(graph, [m.wait, m.collective])


def _choices(m):
    """The runtime's choice for this shape with plain and with pooled buffers."""
    if m.tokens is None:
        return None
    try:
        return cpool.choices(_served[m.group], m.tokens, m.hidden, getattr(torch, m.dtype))
    except _lib.CcltuneError as e:
        return {"error": str(e)}


def rewrite(graph, settings):
    """The pass proper: plan with compile_rules, apply, report. Returns the GraphReport."""
    view = FxView()
    before = op_counts(graph)
    text_before = str(graph) if settings["record_graphs"] else None
    plan = rules.plan_graph(view, list(graph.nodes), {g: c.world for g, c in _served.items()},
                            fuse=settings["fuse"], collectives=settings["collectives"])
    choices = {id(m): _choices(m) for m in plan.fused}
    plan.pooled, plan.not_pooled = rules.plan_pool(
        view, plan.fused, settings["pool"],
        lambda m: _why_not_pooled(m, choices[id(m)], settings))
    line = plan.summary(view)
    pooled = {id(p.match): p for p in plan.pooled}
    missed = {nm.node: nm.reason for nm in plan.not_pooled}
    fused = [dict(collective=m.collective.name, dtype=m.dtype, hidden=m.hidden, tokens=m.tokens,
                  eps=m.eps, group=m.group, form=m.form, choices=choices[id(m)],
                  pool=_pool_report(pooled.get(id(m)), missed.get(m.collective.name)))
             for m in plan.fused]
    try:
        _apply(graph, plan, settings)
    except Exception as e:  # reported with the graph it failed on, then raised
        line = "FAILED applying (%s: %s); planned: %s" % (type(e).__name__, e, line)
        raise
    finally:
        report = GraphReport(len(_reports), line, plan, before, op_counts(graph), fused,
                             (text_before, str(graph) if settings["record_graphs"] else None))
        _reports.append(report)
        if before:
            log.info("ccltune.torch %s", report)
    return report


def _why_not_pooled(m, choices, settings):
    """compile_rules.plan_pool's refusal: None where the site gets pooled slots."""
    if settings["residual"] != "inplace":
        return "residual=%r (pooled slots update the residual in place)" % settings["residual"]
    why = cpool.why_not(m.group)
    if why:
        return why
    if settings["pool"] == "always":
        return None
    if choices is None or "error" in choices:
        return "the runtime's choices are unknown (%s)" % (choices or {}).get("error", "no tokens")
    if choices["pooled"] == choices["plain"]:
        return "pooled and plain buffers run the same choice (%s)" % choices["plain"]
    return None


def _pool_report(p, why):
    if p is None:
        return {"arranged": False, "why": why}
    return {"arranged": True, "input": "mm into the slot" if p.mm is not None else "copied in",
            "residual": "chained" if p.residual_from is not None else "copied in"}


def _site_key(graph):
    """Sites are named by the graph's text before the rewrite (the same on every rank, and
    for the same graph loaded from the cache) and their index in it."""
    return hashlib.sha256(str(graph).encode()).hexdigest()[:16]


def _apply(graph, plan, settings):
    replaced = {}
    pooled = {id(p.match): p for p in plan.pooled}
    key = _site_key(graph) if pooled else None
    slot_nodes = []
    for i, m in enumerate(plan.fused):
        p = pooled.get(id(m))
        if p is not None:
            site = "%s/%d/%dx%d/%s" % (key, i, m.tokens, m.hidden, m.dtype)
            slot_nodes += _apply_pooled(graph, p, replaced, site, settings["pool"])
        else:
            _apply_fused(graph, m, replaced, settings["residual"])
    if slot_nodes:
        _clone_escaping(graph, slot_nodes)
    for m in plan.plain:
        _apply_plain(graph, m, replaced)
    if plan.fused or plan.plain:
        from torch._inductor.pattern_matcher import stable_topological_sort
        stable_topological_sort(graph)
        graph.lint()


_Base = getattr(_cgp, "CustomInferenceAwareGraphPass", _cgp.CustomGraphPass)


class CompilePass(_Base):
    """The post-grad pass enable() installs; runs the passes it found installed first."""

    def __init__(self, previous, settings):
        self.previous, self.settings = list(previous), dict(settings)

    def __call__(self, graph, is_inference=None):
        aware = getattr(_cgp, "CustomInferenceAwareGraphPass", None)
        for p in self.previous:
            if aware is not None and isinstance(p, aware):
                p(graph, is_inference=is_inference)
            else:
                p(graph)
        rewrite(graph, self.settings)

    def uuid(self):
        ids = [p.uuid() if isinstance(p, _cgp.CustomGraphPass) else None for p in self.previous]
        if None in ids:  # a plain callable has no id: Inductor then skips its cache, as always
            return None
        h = hashlib.sha256()
        for path in (rules.__file__, cpool.__file__, __file__):
            with open(path, "rb") as f:
                h.update(f.read())
        served = sorted((g, c.world) for g, c in _served.items())
        keyed = {k: v for k, v in self.settings.items()
                 if k in ("fuse", "collectives", "residual", "pool")}
        h.update(repr((served, sorted(keyed.items()), ids)).encode())
        return h.hexdigest()


def _groups(group):
    if group is None:
        return [dist.group.WORLD]
    if isinstance(group, (list, tuple)):
        return [g for x in group for g in _groups(x)]
    if hasattr(group, "get_all_groups"):  # a DeviceMesh
        return list(group.get_all_groups())
    return [group]


def enable(group=None, *, fuse=True, collectives=True, residual="inplace", pool="auto",
           verbose=False, record_graphs=False, **config):
    """Serve `group` (None: the world; a ProcessGroup, a DeviceMesh, or a list) in
    torch.compile'd code: creates each group's Communicator (collective over the group;
    `config`: Communicator's results_file, redis_url, pool_bytes, ...) and installs the
    post-grad pass. `fuse` / `collectives`: which rewrites it makes. `residual`: "inplace"
    (the fused op updates the residual, through auto_functionalized; Inductor copies it
    first only where something else still reads it) or "copy" (a functional op that always
    copies it). `pool`: pooled buffers for fused sites, "auto" (where pooled buffers run
    another choice than plain ones), "always" or "never"; slots come from the pool
    (`pool_bytes` / CCLTUNE_POOL_BYTES), else the sites run on ordinary tensors. `verbose`: log each
    graph's line to stderr. `record_graphs`: keep each graph's text before and after in
    explain(). Call again to serve more groups. Returns the Communicators."""
    if residual not in ("inplace", "copy"):
        raise ValueError("ccltune.torch.enable: residual=%r, not 'inplace' or 'copy'" % residual)
    if pool not in rules.POOL_POLICIES:
        raise ValueError("ccltune.torch.enable: pool=%r, not one of %s"
                         % (pool, ", ".join(repr(p) for p in rules.POOL_POLICIES)))
    comms = []
    for g in _groups(group):
        name = g.group_name
        if name not in _served:
            _served[name] = cm.Communicator(g, **config)
            cpool.anchor(name, _served[name])
        comms.append(_served[name])
    settings = dict(fuse=fuse, collectives=collectives, residual=residual, pool=pool,
                    record_graphs=record_graphs)
    cfg = torch._inductor.config
    current = cfg.post_grad_custom_post_pass
    if isinstance(current, CompilePass):
        current.settings = settings
    else:
        previous = list(current) if isinstance(current, (list, tuple)) else [current] if current else []
        _state.update({"pass": CompilePass(previous, settings), "saved": current})
        cfg.post_grad_custom_post_pass = _state["pass"]
    if verbose and not log.handlers:
        log.addHandler(logging.StreamHandler())
        log.setLevel(logging.INFO)
    return comms


def disable(destroy=False):
    """Uninstall the pass (restoring what was set before). Graphs already compiled keep
    calling the ops, so their communicators stay unless `destroy` (collective)."""
    cfg = torch._inductor.config
    if _state["pass"] is not None and cfg.post_grad_custom_post_pass is _state["pass"]:
        cfg.post_grad_custom_post_pass = _state["saved"]
    _state.update({"pass": None, "saved": None})
    if destroy:
        for c in _served.values():
            c.destroy()
        _served.clear()
        cpool.forget()


def explain(clear=False):
    """The GraphReports of the graphs the pass saw, oldest first (a graph loaded from
    Inductor's cache was rewritten when it was compiled and is not listed again)."""
    out = list(_reports)
    if clear:
        _reports.clear()
    return out

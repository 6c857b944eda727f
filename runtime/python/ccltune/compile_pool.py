"""Pooled slots for the fused sites of compiled graphs (issue 23; compile_rules.plan_pool
says which sites get them and how).

A slot is a persistent tensor in the runtime's pool, one per (group, site, role): "input"
(the row-parallel mm writes there), "residual" (where a residual chain starts), "out". It is
allocated at the site's first run outside CUDA-graph capture and kept until the group's
Communicator is destroyed, so a captured graph replays on the same memory (the reason
PyTorch's symmetric-memory buffers carry an alloc_id). Peer kernels find a buffer at one pool
offset on every rank: slots are taken in the same order on every rank (the same compiled
graph), and a collective check compares each slot's offset across the group; where they
differ, or the pool is full, or the runtime would run the same choice with pooled buffers as
with plain ones (policy "auto"), the site gets ordinary tensors and the runtime's unfused
choice. Correctness never depends on the slots: the runtime classifies each call's buffers
by address, as for any tensor.

Inductor must never reuse a slot's storage for another buffer (a graph output living in a
slot would change under the caller at the next call): the ops' lowerings mark their results
never-reuse, and the pass clones slot values a graph returns.
"""
import math

import torch
import torch.distributed as dist
import torch.utils._pytree as pytree

from ccltune import _lib

_anchors = {}    # group name -> (Communicator, address of its first pool byte) or why not
_decisions = {}  # (group, site) -> bool: does this site use slots
_slots = {}      # (group, site, role) -> tensor, or None (decided: ordinary tensors)
_addresses = set()  # data_ptr of every slot, for counting arranged calls
_lowering = {"why": None}


def anchor(group_name, comm):
    """At enable(), on a fresh Communicator: its pool's first byte (offset 0 on every rank),
    the base slot offsets are compared against. Records why not where there is no pool."""
    if group_name in _anchors:
        return
    try:
        t = comm.empty(1, dtype=torch.uint8)
        _anchors[group_name] = (comm, t.data_ptr())
    except _lib.CcltuneError as e:
        _anchors[group_name] = ("no pool (enable(pool_bytes=N) or CCLTUNE_POOL_BYTES sets one)"
                                if "no pool" in str(e) else "the pool refused a byte (%s)" % e)


def why_not(group_name):
    """None where slots can be had for the group, else why not (one line)."""
    if _lowering["why"]:
        return _lowering["why"]
    a = _anchors.get(group_name)
    if a is None:
        return "group %r has no anchor (not served by enable())" % group_name
    return a if isinstance(a, str) else None


def forget():
    """Every slot is gone with its Communicator (disable(destroy=True))."""
    for table in (_anchors, _decisions, _slots, _addresses):
        table.clear()


def is_slot(t):
    return t.data_ptr() in _addresses


def slot(group_name, site, role, shape, dtype, policy):
    """The slot for (site, role), or None: use an ordinary tensor."""
    key = (group_name, site, role)
    if key in _slots:
        return _slots[key]
    if torch.cuda.is_current_stream_capturing():
        return None  # taken at the next run outside capture (every rank alike)
    a = _anchors.get(group_name)
    if isinstance(a, str) or a is None or not _uses_slots(a[0], group_name, site, shape, dtype,
                                                         policy):
        _slots[key] = None
        return None
    comm, base = a
    t = _take(comm, shape, dtype)
    offset = t.data_ptr() - base if t is not None else -1
    if not _same_everywhere(comm, offset) and t is not None:
        comm.free(t)
        t = None
    _slots[key] = t
    if t is not None:
        _addresses.add(t.data_ptr())
    return t


def choices(comm, tokens, hidden, dtype):
    """What the runtime runs for an all-reduce + residual + RMSNorm of tokens x hidden, with
    plain and with pooled buffers: the pass reports it, and "auto" pools where they differ."""
    return {"plain": comm.epilogue_choice("residual_rmsnorm", tokens, hidden, dtype, False),
            "pooled": comm.epilogue_choice("residual_rmsnorm", tokens, hidden, dtype, True)}


def _uses_slots(comm, group_name, site, shape, dtype, policy):
    # Asked again at run time, not only when compiling: a graph from Inductor's cache may meet
    # other winners than the ones it was compiled under.
    k = (group_name, site)
    if k not in _decisions:
        c = None if policy == "always" else choices(comm, math.prod(shape[:-1]), shape[-1], dtype)
        _decisions[k] = c is None or c["pooled"] != c["plain"]
    return _decisions[k]


def _take(comm, shape, dtype):
    try:
        return comm.empty(*shape, dtype=dtype)
    except _lib.CcltuneError:  # the pool is full: this site runs on ordinary tensors
        return None


def _same_everywhere(comm, offset):
    """Collective over the group: does every rank have this slot at `offset` (>= 0)?"""
    t = torch.tensor([offset, -offset], dtype=torch.int64, device=comm.device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=comm.group)
    hi, neg_lo = t.tolist()
    return offset >= 0 and hi == offset and -neg_lo == offset


# --- the ops the pass inserts -------------------------------------------------------------
@torch.library.custom_op("ccltune::pool_mm", mutates_args=())
def pool_mm(a: torch.Tensor, b: torch.Tensor, group_name: str, site: str,
            policy: str) -> torch.Tensor:
    """a @ b, written into the site's input slot where it has one."""
    s = slot(group_name, site, "input", (a.shape[0], b.shape[1]), a.dtype, policy)
    return torch.mm(a, b) if s is None else torch.mm(a, b, out=s)


@pool_mm.register_fake
def _(a, b, group_name, site, policy):
    return a.new_empty((a.shape[0], b.shape[1]))


@torch.library.custom_op("ccltune::pool_place", mutates_args=())
def pool_place(x: torch.Tensor, group_name: str, site: str, role: str,
               policy: str) -> torch.Tensor:
    """A copy of x in the site's `role` slot (an ordinary copy where it has none)."""
    s = slot(group_name, site, role, tuple(x.shape), x.dtype, policy)
    return x.clone(memory_format=torch.contiguous_format) if s is None else s.copy_(x)


@pool_place.register_fake
def _(x, group_name, site, role, policy):
    return x.new_empty(x.shape)


@torch.library.custom_op("ccltune::pool_slot", mutates_args=())
def pool_slot(like: torch.Tensor, group_name: str, site: str, role: str,
              policy: str) -> torch.Tensor:
    """The site's `role` slot, shaped like `like` (contents undefined)."""
    s = slot(group_name, site, role, tuple(like.shape), like.dtype, policy)
    return torch.empty_like(like, memory_format=torch.contiguous_format) if s is None else s


@pool_slot.register_fake
def _(like, group_name, site, role, policy):
    return like.new_empty(like.shape)


def _never_reuse_lowerings():
    """Lower the three ops as Inductor's fallback does, with their results never reused."""
    try:
        from torch._inductor import ir
        from torch._inductor.lowering import register_lowering
        from torch._inductor.virtualized import V
    except ImportError as e:
        _lowering["why"] = "Inductor's lowering API is not importable here (%s)" % e
        return
    for op in (torch.ops.ccltune.pool_mm.default, torch.ops.ccltune.pool_place.default,
               torch.ops.ccltune.pool_slot.default):
        def lower(*args, _op=op, **kwargs):
            result = ir.FallbackKernel.create(_op, *args, **kwargs)
            for leaf in pytree.tree_leaves(result):
                V.graph.never_reuse_buffers.add(leaf.get_name())
            return pytree.tree_map(ir.TensorBox.create, result)
        register_lowering(op, type_promotion_kind=None)(lower)


_never_reuse_lowerings()

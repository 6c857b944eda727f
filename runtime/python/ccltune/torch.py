"""ccltune.torch: the tuned winners as PyTorch custom ops.

    import torch.distributed as dist
    import ccltune.torch as ct
    dist.init_process_group("nccl")
    comm = ct.Communicator()                  # collective: an NCCL communicator + libccltune
    x = comm.empty(4096, dtype=torch.bfloat16)  # optional: pooled memory, every kernel applies
    ct.all_reduce(x, comm)                    # in place, the winner of the nearest tuned size
    y = ct.all_gather(x, comm); z = ct.reduce_scatter(x, comm)

The ops are registered with torch.library (`torch.ops.ccltune.*`), so CUDA-graph capture and
torch.compile take them; they run on torch's current stream. Winners come from
CCLTUNE_RESULTS_FILE or CCLTUNE_REDIS_URL (or the `results_file` / `redis_url` arguments).
Tensors must be contiguous CUDA tensors of the communicator's device.
"""
import ctypes

import torch
import torch.distributed as dist

from ccltune import _lib

_DTYPES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16",
           torch.int32: "int32", torch.int8: "int8"}
_comms = {}  # handle -> Communicator: custom ops take plain ints
_ALL_REDUCE = _lib.lib().ccltuneAllReduce


class Communicator:
    """libccltune over a fresh NCCL communicator of `group`'s ranks (collective)."""

    def __init__(self, group=None, **config):
        self.group = group or dist.group.WORLD
        self.rank = dist.get_rank(self.group)
        self.world = dist.get_world_size(self.group)
        self.device = torch.device("cuda", torch.cuda.current_device())
        uid = _lib.UniqueId()
        if self.rank == 0:
            _lib.check_nccl(_lib.nccl().ncclGetUniqueId(ctypes.byref(uid)), "ncclGetUniqueId")
        # The id is 128 raw bytes: ctypes' char-array field would stop at the first NUL.
        size = ctypes.sizeof(uid)
        box = [ctypes.string_at(ctypes.addressof(uid), size) if self.rank == 0 else None]
        dist.broadcast_object_list(box, src=dist.get_global_rank(self.group, 0), group=self.group)
        ctypes.memmove(ctypes.addressof(uid), box[0], size)
        self._nccl = ctypes.c_void_p()
        _lib.check_nccl(_lib.nccl().ncclCommInitRank(ctypes.byref(self._nccl), self.world, uid,
                                                    self.rank), "ncclCommInitRank")
        self._cfg = _lib.Config.make(**config)
        self._rt = ctypes.c_void_p()
        _lib.check(_lib.lib().ccltuneCommInit(self._nccl, ctypes.byref(self._cfg),
                                             ctypes.byref(self._rt)), "ccltuneCommInit")
        self.handle = id(self)
        _comms[self.handle] = self
        self._pooled = []

    def empty(self, *shape, dtype=torch.bfloat16):
        """A tensor in the runtime's pool (collective: same shapes, same order on every rank).
        Lives until destroy(); our kernels reach it without copies."""
        n = 1
        for s in shape:
            n *= s
        nbytes = max(1, n * torch.empty((), dtype=dtype).element_size())
        ptr = ctypes.c_void_p()
        _lib.check(_lib.lib().ccltuneMemAlloc(self._rt, ctypes.byref(ptr), nbytes), "ccltuneMemAlloc")
        self._pooled.append(ptr.value)
        raw = torch.as_tensor(_CudaArray(ptr.value, nbytes), device=self.device)
        return raw.view(dtype)[:n].view(*shape) if shape else raw.view(dtype)[:n]

    def choice(self, op, nbytes, dtype=torch.bfloat16, reduce_op="sum", pooled=False):
        """The choice name a call of `nbytes` (whole message) runs."""
        buf = ctypes.create_string_buffer(256)
        _lib.check(_lib.lib().ccltuneGetChoice(
            self._rt, _lib.OPS[op], _lib.NCCL_TYPES[_DTYPES[dtype]], _lib.NCCL_OPS[reduce_op],
            nbytes, int(pooled), buf, 256), "ccltuneGetChoice")
        return buf.value.decode()

    def destroy(self):
        """Collective. Frees the pool (tensors from empty() are invalid after)."""
        if self._rt:
            torch.cuda.synchronize(self.device)
            _lib.check(_lib.lib().ccltuneCommDestroy(self._rt), "ccltuneCommDestroy")
            self._rt = ctypes.c_void_p()
            _lib.nccl().ncclCommDestroy(self._nccl)
            _comms.pop(self.handle, None)


class _CudaArray:
    """A raw device range as __cuda_array_interface__ (bytes), for torch.as_tensor."""

    def __init__(self, ptr, nbytes):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1",
                                         "data": (ptr, False), "version": 3, "strides": None}


_NCCL_TYPE = {dt: _lib.NCCL_TYPES[name] for dt, name in _DTYPES.items()}


def _args(t, comm):
    if not t.is_cuda or not t.is_contiguous():
        raise ValueError("ccltune.torch: tensor must be a contiguous CUDA tensor")
    if t.dtype not in _NCCL_TYPE:
        raise ValueError("ccltune.torch: dtype %s is not one of %s" % (t.dtype, list(_DTYPES)))
    # The raw handle of torch's current stream, without building a Stream object per call.
    stream = torch._C._cuda_getCurrentRawStream(t.device.index)
    return _comms[comm], _NCCL_TYPE[t.dtype], stream


@torch.library.custom_op("ccltune::all_reduce_", mutates_args=("tensor",))
def _all_reduce_(tensor: torch.Tensor, comm: int, op: int) -> None:
    c, t, s = _args(tensor, comm)
    _lib.check(_lib.lib().ccltuneAllReduce(tensor.data_ptr(), tensor.data_ptr(), tensor.numel(),
                                          t, op, c._rt, s), "ccltuneAllReduce")


@torch.library.custom_op("ccltune::all_reduce", mutates_args=())
def _all_reduce(tensor: torch.Tensor, comm: int, op: int) -> torch.Tensor:
    out = torch.empty_like(tensor)
    c, t, s = _args(tensor, comm)
    _lib.check(_lib.lib().ccltuneAllReduce(tensor.data_ptr(), out.data_ptr(), tensor.numel(), t,
                                          op, c._rt, s), "ccltuneAllReduce")
    return out


@_all_reduce.register_fake
def _(tensor, comm, op):
    return torch.empty_like(tensor)


@torch.library.custom_op("ccltune::all_gather", mutates_args=())
def _all_gather(tensor: torch.Tensor, comm: int) -> torch.Tensor:
    c, t, s = _args(tensor, comm)
    out = tensor.new_empty((c.world * tensor.shape[0],) + tuple(tensor.shape[1:]))
    _lib.check(_lib.lib().ccltuneAllGather(tensor.data_ptr(), out.data_ptr(), tensor.numel(), t,
                                          c._rt, s), "ccltuneAllGather")
    return out


@_all_gather.register_fake
def _(tensor, comm):
    c = _comms[comm]
    return tensor.new_empty((c.world * tensor.shape[0],) + tuple(tensor.shape[1:]))


@torch.library.custom_op("ccltune::reduce_scatter", mutates_args=())
def _reduce_scatter(tensor: torch.Tensor, comm: int, op: int) -> torch.Tensor:
    c, t, s = _args(tensor, comm)
    if tensor.shape[0] % c.world:
        raise ValueError("ccltune.torch: dim 0 (%d) not divisible by %d ranks" % (tensor.shape[0], c.world))
    out = tensor.new_empty((tensor.shape[0] // c.world,) + tuple(tensor.shape[1:]))
    _lib.check(_lib.lib().ccltuneReduceScatter(tensor.data_ptr(), out.data_ptr(), out.numel(), t,
                                              op, c._rt, s), "ccltuneReduceScatter")
    return out


@_reduce_scatter.register_fake
def _(tensor, comm, op):
    c = _comms[comm]
    return tensor.new_empty((tensor.shape[0] // c.world,) + tuple(tensor.shape[1:]))


def all_reduce(tensor, comm, op="sum", inplace=True):
    """All-reduce through the tuned winner; in place by default (returns the tensor).

    Eagerly and under CUDA-graph capture the in-place form calls libccltune directly: the
    custom op's dispatch costs tens of microseconds of host time per call, more than a
    small all-reduce takes on the GPU. torch.compile traces the registered op instead."""
    code = _lib.NCCL_OPS[op]
    if inplace:
        if torch.compiler.is_compiling():
            torch.ops.ccltune.all_reduce_(tensor, comm.handle, code)
        else:
            _all_reduce_direct(tensor, comm, code)
        return tensor
    return torch.ops.ccltune.all_reduce(tensor, comm.handle, code)


def _all_reduce_direct(tensor, comm, code):
    c, t, s = _args(tensor, comm.handle)
    _lib.check(_ALL_REDUCE(tensor.data_ptr(), tensor.data_ptr(), tensor.numel(), t, code, c._rt, s),
               "ccltuneAllReduce")


def all_gather(tensor, comm):
    """Concatenation along dim 0 of every rank's tensor."""
    return torch.ops.ccltune.all_gather(tensor, comm.handle)


def reduce_scatter(tensor, comm, op="sum"):
    """This rank's 1/world slice (dim 0) of the reduction."""
    return torch.ops.ccltune.reduce_scatter(tensor, comm.handle, _lib.NCCL_OPS[op])

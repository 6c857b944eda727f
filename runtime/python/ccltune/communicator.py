"""ccltune.communicator: a Communicator (an NCCL communicator + libccltune) and the calls on
it, shared by the eager custom ops of ccltune.torch (by handle) and the ops that
ccltune.torch.enable()'s compiler pass inserts (compile_pass.py, by group name). Its own
module so that neither of those two imports the other for them.
"""
import ctypes

import torch
import torch.distributed as dist

from ccltune import _lib

_DTYPES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16",
           torch.int32: "int32", torch.int8: "int8"}
by_handle = {}  # handle -> Communicator: custom ops take plain ints
_ALL_REDUCE = _lib.lib().ccltuneAllReduce
_AR_RMSNORM = _lib.lib().ccltuneAllReduceResidualRmsNorm
_AR_BIAS = _lib.lib().ccltuneAllReduceBias


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
        by_handle[self.handle] = self
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

    def free(self, tensor):
        """Returns a tensor from empty() to the pool (collective, like empty())."""
        ptr = tensor.data_ptr()
        _lib.check(_lib.lib().ccltuneMemFree(self._rt, ctypes.c_void_p(ptr)), "ccltuneMemFree")
        self._pooled.remove(ptr)

    def choice(self, op, nbytes, dtype=torch.bfloat16, reduce_op="sum", pooled=False):
        """The choice name a call of `nbytes` (whole message) runs."""
        buf = ctypes.create_string_buffer(256)
        _lib.check(_lib.lib().ccltuneGetChoice(
            self._rt, _lib.OPS[op], _lib.NCCL_TYPES[_DTYPES[dtype]], _lib.NCCL_OPS[reduce_op],
            nbytes, int(pooled), buf, 256), "ccltuneGetChoice")
        return buf.value.decode()

    def epilogue_choice(self, epilogue, tokens, hidden, dtype=torch.bfloat16, pooled=False):
        """The choice name an all-reduce + `epilogue` ("none", "bias", "residual_rmsnorm") of
        tokens x hidden runs; `pooled`: input, out and residual from empty()."""
        buf = ctypes.create_string_buffer(256)
        _lib.check(_lib.lib().ccltuneGetEpilogueChoice(
            self._rt, _lib.EPILOGUES[epilogue], hidden, _lib.NCCL_TYPES[_DTYPES[dtype]], tokens,
            int(pooled), buf, 256), "ccltuneGetEpilogueChoice")
        return buf.value.decode()

    def destroy(self):
        """Collective. Frees the pool (tensors from empty() are invalid after)."""
        if self._rt:
            torch.cuda.synchronize(self.device)
            _lib.check(_lib.lib().ccltuneCommDestroy(self._rt), "ccltuneCommDestroy")
            self._rt = ctypes.c_void_p()
            _lib.nccl().ncclCommDestroy(self._nccl)
            by_handle.pop(self.handle, None)


class _CudaArray:
    """A raw device range as __cuda_array_interface__ (bytes), for torch.as_tensor."""

    def __init__(self, ptr, nbytes):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1",
                                         "data": (ptr, False), "version": 3, "strides": None}


_NCCL_TYPE = {dt: _lib.NCCL_TYPES[name] for dt, name in _DTYPES.items()}


def _args(t, c):
    """(Communicator c, NCCL type, current raw stream) for a call on tensor t."""
    if not t.is_cuda or not t.is_contiguous():
        raise ValueError("ccltune.torch: tensor must be a contiguous CUDA tensor")
    if t.dtype not in _NCCL_TYPE:
        raise ValueError("ccltune.torch: dtype %s is not one of %s" % (t.dtype, list(_DTYPES)))
    # The raw handle of torch's current stream, without building a Stream object per call.
    stream = torch._C._cuda_getCurrentRawStream(t.device.index)
    return c, _NCCL_TYPE[t.dtype], stream


# The calls themselves, on a Communicator.
def run_all_reduce(src, dst, c, op):
    """dst = the all-reduce (NCCL op code `op`) of src; dst may be src."""
    c, t, s = _args(src, c)
    _lib.check(_ALL_REDUCE(src.data_ptr(), dst.data_ptr(), src.numel(), t, op, c._rt, s),
               "ccltuneAllReduce")


def gathered_shape(tensor, world):
    return (world * tensor.shape[0],) + tuple(tensor.shape[1:])


def run_all_gather(tensor, c):
    c, t, s = _args(tensor, c)
    out = tensor.new_empty(gathered_shape(tensor, c.world))
    _lib.check(_lib.lib().ccltuneAllGather(tensor.data_ptr(), out.data_ptr(), tensor.numel(), t,
                                          c._rt, s), "ccltuneAllGather")
    return out


def scattered_shape(tensor, world):
    if tensor.shape[0] % world:
        raise ValueError("ccltune.torch: dim 0 (%d) not divisible by %d ranks" % (tensor.shape[0], world))
    return (tensor.shape[0] // world,) + tuple(tensor.shape[1:])


def run_reduce_scatter(tensor, c, op):
    c, t, s = _args(tensor, c)
    out = tensor.new_empty(scattered_shape(tensor, c.world))
    _lib.check(_lib.lib().ccltuneReduceScatter(tensor.data_ptr(), out.data_ptr(), out.numel(), t,
                                              op, c._rt, s), "ccltuneReduceScatter")
    return out


# All-reduce + epilogue (libccltune 0.2). Rows are the last dimension (hidden); every leading
# dimension counts as tokens.
def _rows(input, weight, residual, output, comm):
    c, t, s = _args(input, comm)
    hidden = input.shape[-1] if input.dim() else 0
    for name, x in (("weight", weight), ("residual", residual), ("out", output)):
        if x is None:
            continue
        if not x.is_cuda or not x.is_contiguous() or x.dtype != input.dtype or x.device != input.device:
            raise ValueError("ccltune.torch: %s must be a contiguous CUDA tensor of input's dtype "
                             "and device" % name)
        want = (hidden,) if name == "weight" else tuple(input.shape)
        if tuple(x.shape) != want:
            raise ValueError("ccltune.torch: %s has shape %s, expected %s"
                             % (name, tuple(x.shape), want))
    return c, t, s, (input.numel() // hidden if hidden else 0), hidden


def run_rmsnorm(input, residual, weight, eps, comm, output):
    """residual += sum all-reduce(input); output = RMSNorm(residual) * weight."""
    c, t, s, tokens, hidden = _rows(input, weight, residual, output, comm)
    _lib.check(_AR_RMSNORM(input.data_ptr(), residual.data_ptr(), weight.data_ptr(),
                           output.data_ptr(), tokens, hidden, eps, t, c._rt, s),
               "ccltuneAllReduceResidualRmsNorm")


def run_bias(input, bias, comm, output):
    """output = sum all-reduce(input) + bias."""
    c, t, s, tokens, hidden = _rows(input, bias, None, output, comm)
    _lib.check(_AR_BIAS(input.data_ptr(), bias.data_ptr(), output.data_ptr(), tokens, hidden, t,
                        c._rt, s), "ccltuneAllReduceBias")

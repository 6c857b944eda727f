"""ccltune.torch: the tuned winners as PyTorch custom ops.

    import torch.distributed as dist
    import ccltune.torch as ct
    dist.init_process_group("nccl")
    comm = ct.Communicator()                  # collective: an NCCL communicator + libccltune
    x = comm.empty(4096, dtype=torch.bfloat16)  # optional: pooled memory, every kernel applies
    ct.all_reduce(x, comm)                    # in place, the winner of the nearest tuned size
    y = ct.all_gather(x, comm); z = ct.reduce_scatter(x, comm)
    # tensor-parallel inference: the row-parallel output's all-reduce, residual add, RMSNorm
    h = ct.all_reduce_residual_rmsnorm(partial, residual, weight, 1e-5, comm)  # residual updated

The epilogue ops run fused winners (all-reduce and epilogue in one launch) only when input,
out and residual all come from comm.empty(); pass `out=` such a tensor (or the input itself)
for that. Other tensors get the fastest unfused choice: an all-reduce then a separate kernel.

Without changing model code (issue 23): after init_process_group,

    ct.enable()                               # serve the world group in torch.compile'd code
    model = torch.compile(model)              # all-reduce + residual add + RMSNorm -> fused op
    print(*ct.explain(), sep="\n")            # per graph: what was rewritten, what not and why

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
            _comms.pop(self.handle, None)


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


# The calls themselves, on a Communicator: the ops below (by handle) and the ops that
# enable()'s compiler pass inserts (by group name, compile_pass.py) share them.
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


@torch.library.custom_op("ccltune::all_reduce_", mutates_args=("tensor",))
def _all_reduce_(tensor: torch.Tensor, comm: int, op: int) -> None:
    run_all_reduce(tensor, tensor, _comms[comm], op)


@torch.library.custom_op("ccltune::all_reduce", mutates_args=())
def _all_reduce(tensor: torch.Tensor, comm: int, op: int) -> torch.Tensor:
    out = torch.empty_like(tensor)
    run_all_reduce(tensor, out, _comms[comm], op)
    return out


@_all_reduce.register_fake
def _(tensor, comm, op):
    return torch.empty_like(tensor)


@torch.library.custom_op("ccltune::all_gather", mutates_args=())
def _all_gather(tensor: torch.Tensor, comm: int) -> torch.Tensor:
    return run_all_gather(tensor, _comms[comm])


@_all_gather.register_fake
def _(tensor, comm):
    return tensor.new_empty(gathered_shape(tensor, _comms[comm].world))


@torch.library.custom_op("ccltune::reduce_scatter", mutates_args=())
def _reduce_scatter(tensor: torch.Tensor, comm: int, op: int) -> torch.Tensor:
    return run_reduce_scatter(tensor, _comms[comm], op)


@_reduce_scatter.register_fake
def _(tensor, comm, op):
    return tensor.new_empty(scattered_shape(tensor, _comms[comm].world))


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
    run_all_reduce(tensor, tensor, comm, code)


def all_gather(tensor, comm):
    """Concatenation along dim 0 of every rank's tensor."""
    return torch.ops.ccltune.all_gather(tensor, comm.handle)


def reduce_scatter(tensor, comm, op="sum"):
    """This rank's 1/world slice (dim 0) of the reduction."""
    return torch.ops.ccltune.reduce_scatter(tensor, comm.handle, _lib.NCCL_OPS[op])


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


def _rmsnorm_direct(input, residual, weight, eps, comm, output):
    c, t, s, tokens, hidden = _rows(input, weight, residual, output, comm)
    _lib.check(_AR_RMSNORM(input.data_ptr(), residual.data_ptr(), weight.data_ptr(),
                           output.data_ptr(), tokens, hidden, eps, t, c._rt, s),
               "ccltuneAllReduceResidualRmsNorm")


def _bias_direct(input, bias, comm, output):
    c, t, s, tokens, hidden = _rows(input, bias, None, output, comm)
    _lib.check(_AR_BIAS(input.data_ptr(), bias.data_ptr(), output.data_ptr(), tokens, hidden, t,
                        c._rt, s), "ccltuneAllReduceBias")


@torch.library.custom_op("ccltune::all_reduce_residual_rmsnorm", mutates_args=("residual",))
def _ar_rmsnorm(input: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float,
                comm: int) -> torch.Tensor:
    output = torch.empty_like(input)
    _rmsnorm_direct(input, residual, weight, eps, _comms[comm], output)
    return output


@_ar_rmsnorm.register_fake
def _(input, residual, weight, eps, comm):
    return torch.empty_like(input)


@torch.library.custom_op("ccltune::all_reduce_residual_rmsnorm_out",
                         mutates_args=("residual", "output"))
def _ar_rmsnorm_out(input: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                    eps: float, comm: int, output: torch.Tensor) -> None:
    _rmsnorm_direct(input, residual, weight, eps, _comms[comm], output)


@_ar_rmsnorm_out.register_fake
def _(input, residual, weight, eps, comm, output):
    return None


@torch.library.custom_op("ccltune::all_reduce_bias", mutates_args=())
def _ar_bias(input: torch.Tensor, bias: torch.Tensor, comm: int) -> torch.Tensor:
    output = torch.empty_like(input)
    _bias_direct(input, bias, _comms[comm], output)
    return output


@_ar_bias.register_fake
def _(input, bias, comm):
    return torch.empty_like(input)


@torch.library.custom_op("ccltune::all_reduce_bias_out", mutates_args=("output",))
def _ar_bias_out(input: torch.Tensor, bias: torch.Tensor, comm: int, output: torch.Tensor) -> None:
    _bias_direct(input, bias, _comms[comm], output)


@_ar_bias_out.register_fake
def _(input, bias, comm, output):
    return None


def all_reduce_residual_rmsnorm(input, residual, weight, eps, comm, out=None):
    """Sum all-reduce of `input` (..., hidden: this rank's partial sums), then
    residual += sum (in place) and out = RMSNorm(residual) * weight; returns out.

    `out`: None for a new tensor; `input` itself (its partial sums are consumed) or a tensor
    from comm.empty() so that fused winners apply (they need input, out and residual all
    pooled). Eagerly and under CUDA-graph capture this calls libccltune directly (no custom-op
    dispatch); torch.compile traces the registered ops."""
    compiling = torch.compiler.is_compiling()
    if out is None:
        if compiling:
            return torch.ops.ccltune.all_reduce_residual_rmsnorm(input, residual, weight, eps,
                                                                 comm.handle)
        out = torch.empty_like(input)
    if compiling:
        torch.ops.ccltune.all_reduce_residual_rmsnorm_out(input, residual, weight, eps,
                                                          comm.handle, out)
    else:
        _rmsnorm_direct(input, residual, weight, eps, comm, out)
    return out


def all_reduce_bias(input, bias, comm, out=None):
    """Sum all-reduce of `input` (..., hidden), then out = sum + bias; returns out (`out` as
    for all_reduce_residual_rmsnorm)."""
    compiling = torch.compiler.is_compiling()
    if out is None:
        if compiling:
            return torch.ops.ccltune.all_reduce_bias(input, bias, comm.handle)
        out = torch.empty_like(input)
    if compiling:
        torch.ops.ccltune.all_reduce_bias_out(input, bias, comm.handle, out)
    else:
        _bias_direct(input, bias, comm, out)
    return out


def enable(group=None, **settings):
    """Serve `group` (None: the world) in torch.compile'd code: the Inductor pass that puts
    the fused op and ccltune's collectives into compiled graphs (compile_pass.enable)."""
    from ccltune import compile_pass
    return compile_pass.enable(group, **settings)


def disable(destroy=False):
    """Uninstall enable()'s pass (compile_pass.disable)."""
    from ccltune import compile_pass
    compile_pass.disable(destroy)


def explain(clear=False):
    """What enable()'s pass did to each graph it saw (compile_pass.explain)."""
    from ccltune import compile_pass
    return compile_pass.explain(clear)

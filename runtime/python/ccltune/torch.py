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
import torch

from ccltune import _lib
from ccltune import communicator as cm
from ccltune.communicator import Communicator  # noqa: F401  (the public name: ct.Communicator)


@torch.library.custom_op("ccltune::all_reduce_", mutates_args=("tensor",))
def _all_reduce_(tensor: torch.Tensor, comm: int, op: int) -> None:
    cm.run_all_reduce(tensor, tensor, cm.by_handle[comm], op)


@torch.library.custom_op("ccltune::all_reduce", mutates_args=())
def _all_reduce(tensor: torch.Tensor, comm: int, op: int) -> torch.Tensor:
    out = torch.empty_like(tensor)
    cm.run_all_reduce(tensor, out, cm.by_handle[comm], op)
    return out


@_all_reduce.register_fake
def _(tensor, comm, op):
    return torch.empty_like(tensor)


@torch.library.custom_op("ccltune::all_gather", mutates_args=())
def _all_gather(tensor: torch.Tensor, comm: int) -> torch.Tensor:
    return cm.run_all_gather(tensor, cm.by_handle[comm])


@_all_gather.register_fake
def _(tensor, comm):
    return tensor.new_empty(cm.gathered_shape(tensor, cm.by_handle[comm].world))


@torch.library.custom_op("ccltune::reduce_scatter", mutates_args=())
def _reduce_scatter(tensor: torch.Tensor, comm: int, op: int) -> torch.Tensor:
    return cm.run_reduce_scatter(tensor, cm.by_handle[comm], op)


@_reduce_scatter.register_fake
def _(tensor, comm, op):
    return tensor.new_empty(cm.scattered_shape(tensor, cm.by_handle[comm].world))


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
    cm.run_all_reduce(tensor, tensor, comm, code)


def all_gather(tensor, comm):
    """Concatenation along dim 0 of every rank's tensor."""
    return torch.ops.ccltune.all_gather(tensor, comm.handle)


def reduce_scatter(tensor, comm, op="sum"):
    """This rank's 1/world slice (dim 0) of the reduction."""
    return torch.ops.ccltune.reduce_scatter(tensor, comm.handle, _lib.NCCL_OPS[op])


@torch.library.custom_op("ccltune::all_reduce_residual_rmsnorm", mutates_args=("residual",))
def _ar_rmsnorm(input: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float,
                comm: int) -> torch.Tensor:
    output = torch.empty_like(input)
    cm.run_rmsnorm(input, residual, weight, eps, cm.by_handle[comm], output)
    return output


@_ar_rmsnorm.register_fake
def _(input, residual, weight, eps, comm):
    return torch.empty_like(input)


@torch.library.custom_op("ccltune::all_reduce_residual_rmsnorm_out",
                         mutates_args=("residual", "output"))
def _ar_rmsnorm_out(input: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                    eps: float, comm: int, output: torch.Tensor) -> None:
    cm.run_rmsnorm(input, residual, weight, eps, cm.by_handle[comm], output)


@_ar_rmsnorm_out.register_fake
def _(input, residual, weight, eps, comm, output):
    return None


@torch.library.custom_op("ccltune::all_reduce_bias", mutates_args=())
def _ar_bias(input: torch.Tensor, bias: torch.Tensor, comm: int) -> torch.Tensor:
    output = torch.empty_like(input)
    cm.run_bias(input, bias, cm.by_handle[comm], output)
    return output


@_ar_bias.register_fake
def _(input, bias, comm):
    return torch.empty_like(input)


@torch.library.custom_op("ccltune::all_reduce_bias_out", mutates_args=("output",))
def _ar_bias_out(input: torch.Tensor, bias: torch.Tensor, comm: int, output: torch.Tensor) -> None:
    cm.run_bias(input, bias, cm.by_handle[comm], output)


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
        cm.run_rmsnorm(input, residual, weight, eps, comm, out)
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
        cm.run_bias(input, bias, comm, out)
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

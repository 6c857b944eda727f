"""One process per GPU for the device programs, with a deadline: spawn(...) starts `fn(rank,
*args)` for every rank and waits at most `timeout_s`; past it, or when a rank fails, the
others are killed. Returns 0, 1 (a rank raised or died) or 3 (the deadline passed).
MULTICAST_OFF: the variables every rank sets first."""
import shutil
import sys
import time

# NVLink multicast stays off in every rank (set before anything touches CUDA).
MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                 "NVSHMEM_DISABLE_NVLS": "1"}


def spawn(fn, world, args, timeout_s, name, tmp=None):
    """tmp: a directory removed once the ranks are gone (their rendezvous files), or None."""
    import torch.multiprocessing as mp
    deadline = time.monotonic() + timeout_s
    ctx = mp.start_processes(fn, args=args, nprocs=world, join=False, start_method="spawn")
    rc = 0
    try:
        while not ctx.join(timeout=1):
            if time.monotonic() > deadline:
                print("%s: deadline of %g s passed; killing the ranks" % (name, timeout_s),
                      file=sys.stderr)
                rc = 3
                break
    except Exception as e:  # a rank raised or died; join() already stopped the others
        print("%s: %s" % (name, e), file=sys.stderr)
        rc = 1
    finally:
        for p in ctx.processes:
            if p.is_alive():
                p.kill()
        for p in ctx.processes:
            p.join(10)
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return rc

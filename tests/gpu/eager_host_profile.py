#!/usr/bin/env python3
"""Where an eager dist.all_reduce spends its host time: the CUDA runtime calls of --ops eager
all-reduces (bf16 sum, --bytes each) under torch.profiler, one process per GPU, rank 0's table
by self CPU time. Run it plain and with LD_PRELOAD=libccltune-nccl.so to see what a preloaded
call adds on the host (a call that blocks shows as a long cudaMemcpyAsync or
cudaStreamSynchronize, say). Not a test: it prints figures.

    python3 tests/gpu/eager_host_profile.py --gpus 2 --bytes 1048576 --ops 50 [--timeout-s 300]
"""
import argparse
import datetime
import os
import sys
import tempfile
import time

import rank_processes


def worker(rank, world, args, store):
    os.environ.update(rank_processes.MULTICAST_OFF)
    import torch
    import torch.distributed as dist
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method="file://" + store, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=120),
                            device_id=torch.device("cuda", rank))
    x = torch.ones(args.bytes // 2, dtype=torch.bfloat16, device="cuda")
    for _ in range(10):  # warm-up: first-use setup stays out of the profile
        dist.all_reduce(x)
    torch.cuda.synchronize()
    dist.barrier()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t0 = time.perf_counter()
        for _ in range(args.ops):
            dist.all_reduce(x)
        host = (time.perf_counter() - t0) * 1e6 / args.ops
        torch.cuda.synchronize()
    if rank == 0:
        print("rank 0: %.2f us of host time per all-reduce (%d ops of %d bytes)"
              % (host, args.ops, args.bytes))
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.rows))
    dist.barrier()
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpus", type=int, default=2)
    p.add_argument("--bytes", type=int, default=1 << 20)
    p.add_argument("--ops", type=int, default=50)
    p.add_argument("--rows", type=int, default=15)
    p.add_argument("--timeout-s", type=float, default=300,
                   help="the whole run; past it the ranks are killed (exit status 3)")
    a = p.parse_args()
    if a.gpus < 2 or a.bytes < 2 or a.bytes > (1 << 30) or not 1 <= a.ops <= 10000:
        p.error("--gpus >= 2, --bytes 2..1 GiB, --ops 1..10000")
    tmp = tempfile.mkdtemp(prefix="eager_host_profile-")
    return rank_processes.spawn(worker, a.gpus, (a.gpus, a, os.path.join(tmp, "store")),
                                a.timeout_s, "eager_host_profile", tmp)


if __name__ == "__main__":
    sys.exit(main())

"""Two ranks (one process per GPU) run NCCL collectives through PyTorch under the profiler
plugin (run_profiler_on_device.sh sets NCCL_PROFILER_PLUGIN): allReduce bf16 of 1 KiB to
64 MiB, an allGather and a reduceScatter fp32, each timed with CUDA events on rank 0 for a
comparison with the GPU time the plugin reports."""
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def Run(rank, world, port):
  os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), LOCAL_RANK=str(rank))
  torch.cuda.set_device(rank)
  dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
  if rank == 0:
    print("torch", torch.__version__, "nccl", torch.cuda.nccl.version(), flush=True)
  for shift in range(10, 27, 4):  # 1 KiB .. 64 MiB
    x = torch.ones((1 << shift) // 2, dtype=torch.bfloat16, device="cuda")
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    dist.all_reduce(x)
    start.record()
    dist.all_reduce(x)
    stop.record()
    torch.cuda.synchronize()
    if rank == 0:
      print(f"EVENTS allReduce bf16 {1 << shift} B: {start.elapsed_time(stop) * 1e3:.1f} us",
            flush=True)
  y = torch.ones(4096, dtype=torch.float32, device="cuda")
  out = torch.empty(4096 * world, dtype=torch.float32, device="cuda")
  dist.all_gather_into_tensor(out, y)
  dist.reduce_scatter_tensor(y, out)
  torch.cuda.synchronize()
  dist.barrier()
  dist.destroy_process_group()


if __name__ == "__main__":
  world = torch.cuda.device_count()
  if world < 2:
    sys.exit("needs 2 GPUs")
  mp.spawn(Run, args=(2, 29517), nprocs=2)

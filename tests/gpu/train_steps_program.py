#!/usr/bin/env python3
"""Unmodified DDP and FSDP2 training steps (issue 43): what libccltune-nccl serves in them.

Nothing here knows of ccltune: nccl_shim_multi_on_device.sh runs it plain and with
LD_PRELOAD=libccltune-nccl.so, and compares the step times and the final weights; the
library's own destroy line (rank 0, at destroy_process_group) says how many calls it served
and why it forwarded the rest.

Model: --blocks MLP blocks 2048 -> 8192 -> 2048 (GELU), fp32, --tokens tokens per rank per
step, SGD. DDP: DistributedDataParallel (its default 25 MiB buckets, all-reduced in fp32).
FSDP2: fully_shard on every block, then on the model (all-gather of each block's weights
before its forward and backward, reduce-scatter of its gradients). One process per GPU.
Per program: --warmup steps, then --rounds rounds of [barrier, CUDA events around --steps
steps], a round's time the MAX over ranks, the median round reported in ms per step; then
--profile-steps steps under torch.profiler (every rank; rank 0 reports), whose GPU activities
give each collective's time: per kernel name (NCCL's `nccl...`, ours `ccltune::kernels::...`)
and for device-to-device copies (the staged choices' copies; FSDP2's own copies are kernels),
calls and µs per step; then the sum and the sum of squares of every parameter (float64), so
runs can be compared. Each rank runs on an even share of the cores local to its GPU unless
--no-pin is given (gpu_affinity.py says why). Past --timeout-s (default 300) the ranks are
killed and the exit status is 3; 1 when a rank failed.

--share-gpu puts every rank on GPU 0, each rank its own emulated node (NCCL_HOSTID and
CCLTUNE_NODE_NAME "share-gpu-RANK": NCCL refuses one GPU twice on one host, and across hosts
it talks over sockets). That checks correctness and the library's machinery on a one-GPU
machine; its times say nothing of NVLink or of a real node.

    python3 tests/gpu/train_steps_program.py --gpus 4 --json OUT.json
    python3 tests/gpu/train_steps_program.py --gpus 2 --share-gpu --blocks 2 --json OUT.json
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

import gpu_affinity
import rank_processes

HIDDEN, INTER = 2048, 8192


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gpus", type=int, default=None,
                   help="ranks, one per GPU (default: every GPU); with --share-gpu, ranks on GPU 0")
    p.add_argument("--share-gpu", action="store_true",
                   help="every rank on GPU 0 as its own emulated node (correctness only)")
    p.add_argument("--programs", default="ddp,fsdp2", help="ddp, fsdp2 or both")
    p.add_argument("--blocks", type=int, default=12)
    p.add_argument("--tokens", type=int, default=4096)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--profile-steps", type=int, default=3)
    p.add_argument("--json", help="write the results here (rank 0)")
    p.add_argument("--timeout-s", type=float, default=300,
                   help="the whole run; past it the ranks are killed (exit status 3)")
    gpu_affinity.add_flag(p)
    a = p.parse_args(argv)
    a.programs = [x for x in ("ddp", "fsdp2") if x in a.programs.split(",")]
    if not a.programs:
        p.error("--programs: name ddp, fsdp2 or both")
    if a.share_gpu and (a.gpus is None or a.gpus < 2):
        p.error("--share-gpu: give --gpus, the number of ranks (2 or more)")
    if a.share_gpu:
        a.no_pin = True  # ranks beyond the first have no GPU of their own to be near
    return a


def make_model(torch, blocks):
    torch.manual_seed(1)  # the same weights on every rank and in every run
    layers = []
    for _ in range(blocks):
        layers.append(torch.nn.Sequential(torch.nn.Linear(HIDDEN, INTER), torch.nn.GELU(),
                                          torch.nn.Linear(INTER, HIDDEN)))
    return torch.nn.Sequential(*layers).cuda()


def wrap(torch, model, program, device):
    if program == "ddp":
        return torch.nn.parallel.DistributedDataParallel(model, device_ids=[device])
    from torch.distributed.fsdp import fully_shard
    for block in model:
        fully_shard(block)
    fully_shard(model)
    return model


def run_program(torch, dist, program, rank, args):
    model = wrap(torch, make_model(torch, args.blocks), program, torch.cuda.current_device())
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    gen = torch.Generator(device="cuda").manual_seed(11 + rank)
    x = torch.randn(args.tokens, HIDDEN, device="cuda", generator=gen)

    def step():
        loss = model(x).pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for _ in range(args.warmup):
        step()
    times = []
    for _ in range(args.rounds):
        dist.barrier()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(args.steps):
            step()
        end.record()
        end.synchronize()
        t = torch.tensor([start.elapsed_time(end) / args.steps], device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        times.append(t.item())
    activities = profile_steps(torch, step, args.profile_steps)
    sums = [0.0, 0.0]
    for p in model.parameters():
        full = p.full_tensor() if hasattr(p, "full_tensor") else p  # FSDP2's DTensor
        d = full.detach().double()
        sums[0] += d.sum().item()
        sums[1] += (d * d).sum().item()
    return {"program": program, "msPerStep": statistics.median(times), "rounds": times,
            "collectives": activities, "paramSum": sums[0], "paramSumSq": sums[1]}


def collective_activity(name):
    """The group a GPU activity counts in, or None: a collective kernel or a device copy."""
    if name.startswith("nccl") or "ccltune::kernels::" in name:
        return name
    if "Memcpy DtoD" in name:
        return "Memcpy DtoD"
    return None


def profile_steps(torch, step, steps):
    """name -> {calls, us} per step of the collectives' GPU activities over `steps` steps."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    out = {}
    for e in prof.key_averages():
        group = collective_activity(e.key)
        if group is None:
            continue
        us = getattr(e, "device_time_total", None)
        if us is None:
            us = e.cuda_time_total
        slot = out.setdefault(group, {"calls": 0.0, "us": 0.0})
        slot["calls"] += e.count / steps
        slot["us"] += us / steps
    return out


def rank_main(rank, world, args, tmp, cores):
    os.environ.update(rank_processes.MULTICAST_OFF)
    if args.share_gpu:
        os.environ["NCCL_HOSTID"] = os.environ["CCLTUNE_NODE_NAME"] = "share-gpu-%d" % rank
    gpu_affinity.pin(cores, rank)
    import torch
    import torch.distributed as dist
    device = 0 if args.share_gpu else rank
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", init_method="file://" + os.path.join(tmp, "pg"), rank=rank,
                            world_size=world, device_id=torch.device("cuda", device))
    results = [run_program(torch, dist, prog, rank, args) for prog in args.programs]
    if rank == 0:
        for r in results:
            print("%s: %.3f ms per step (median of %d rounds, max over %d ranks); "
                  "param sum %.9e, sum of squares %.9e" % (
                      r["program"], r["msPerStep"], args.rounds, world, r["paramSum"],
                      r["paramSumSq"]), flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"worldSize": world, "gpu": torch.cuda.get_device_name(0),
                           "sharedGpu": args.share_gpu,
                           "torchVersion": torch.__version__, "blocks": args.blocks,
                           "tokens": args.tokens, "results": results,
                           "cores": gpu_affinity.describe_all(cores)}, f, indent=1)
    dist.destroy_process_group()


def main(argv):
    args = parse_args(argv)
    import torch
    world = args.gpus or torch.cuda.device_count()
    tmp = tempfile.mkdtemp(prefix="train-steps-")
    cores = gpu_affinity.for_run(args, torch, world)
    return rank_processes.spawn(rank_main, world, (world, args, tmp, cores), args.timeout_s,
                                "train_steps_program", tmp)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

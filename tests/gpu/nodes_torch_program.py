"""An unmodified torch.distributed program, started like torchrun starts one (issue 33).

Nothing here knows of ccltune: nodes_torch_check.py starts it once per rank with the
environment torchrun gives (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK) plus,
per emulated node, NCCL_HOSTID or CCLTUNE_NODE_NAME, and with or without libccltune-nccl
preloaded or the NCCL tuner plugin named.

  python3 nodes_torch_program.py OUT_PREFIX BYTES...

Per op (dist.all_reduce, all_gather_into_tensor, reduce_scatter_tensor; bf16; BYTES is the
whole message, as `ccltune tune` counts it) and size: 5 warm-up calls, then 5 rounds of a
barrier and 20 calls between CUDA events; a round's time is the max over ranks, the size's
the median of rounds. Then one call on fresh seeded data, checked against the exact result
computed here from every rank's inputs (reductions within the bound of bf16 partial sums,
world x 2^-8 x the sum of the inputs' magnitudes, per element; all-gather exact), and a
sample of the output kept for comparing runs (nodes_torch_check.py compares those within
2e-2 relative + 3e-2 absolute of the plain run's). Rank 0 writes
OUT_PREFIX.json (times, checks); every rank writes OUT_PREFIX.rank<r>.pt (samples).
"""
import json
import os
import statistics
import sys

import torch
import torch.distributed as dist

OPS = ("all_reduce", "all_gather", "reduce_scatter")
WARMUP, ITERS, ROUNDS = 5, 20, 5
SAMPLE = 1 << 16


def inputs(op, n, rank, world, dev):
    """This rank's seeded input of `op` for a message of `n` bf16 elements."""
    count = n // world if op == "all_gather" else n
    g = torch.Generator(device=dev)
    g.manual_seed(1000003 * (OPS.index(op) + 1) + 7919 * rank + n)
    return torch.randn(count, generator=g, device=dev, dtype=torch.float32).to(torch.bfloat16)


def call(op, x, out):
    if op == "all_reduce":
        dist.all_reduce(out)  # in place: `out` holds the input
    elif op == "all_gather":
        dist.all_gather_into_tensor(out, x)
    else:
        dist.reduce_scatter_tensor(out, x)


def expected(op, n, rank, world, dev):
    """The exact result of `op` on this rank, from every rank's seeded input, and the bound
    on a bf16 reduction's error per element: NCCL rounds every partial sum to bf16 (unit
    roundoff 2^-8), world - 1 additions and the final rounding, each off by at most u times
    the sum of the magnitudes so far (an all-gather copies: bound 0)."""
    if op == "all_gather":
        return torch.cat([inputs(op, n, r, world, dev) for r in range(world)]), 0.0
    total = torch.zeros(n, device=dev, dtype=torch.float32)
    magnitude = torch.zeros(n, device=dev, dtype=torch.float32)
    for r in range(world):
        x = inputs(op, n, r, world, dev).float()
        total += x
        magnitude += x.abs()
    bound = world * 2.0 ** -8 * magnitude
    if op == "all_reduce":
        return total, bound
    return total.view(world, -1)[rank], bound.view(world, -1)[rank]


def buffers(op, n, rank, world, dev):
    x = inputs(op, n, rank, world, dev)
    if op == "all_reduce":
        return x, x.clone()
    out_n = n if op == "all_gather" else n // world
    return x, torch.empty(out_n, device=dev, dtype=torch.bfloat16)


def timed(op, x, out, dev, local):
    for _ in range(WARMUP):
        call(op, x, out)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    rounds = []
    for _ in range(ROUNDS):
        if op == "all_reduce":
            out.copy_(x)  # in place: sums of sums would overflow bf16 over many rounds
        dist.barrier(device_ids=[local])
        start.record()
        for _ in range(ITERS):
            call(op, x, out)
        end.record()
        end.synchronize()
        t = torch.tensor([start.elapsed_time(end) * 1000.0 / ITERS], device=dev)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        rounds.append(t.item())
    return statistics.median(rounds)


def checked(op, n, rank, world, dev):
    """(worst error over the tolerance, sample) of one call on fresh data."""
    x, out = buffers(op, n, rank, world, dev)
    call(op, x, out)
    torch.cuda.synchronize()
    want, bound = expected(op, n, rank, world, dev)
    got = out.float()
    if op == "all_gather":
        bad = float((got != want).sum().item())
    else:
        bad = float(((got - want).abs() > bound).sum().item())
    step = max(1, got.numel() // SAMPLE)
    sample = torch.cat([got[:SAMPLE], got[::step][:SAMPLE]]).cpu()
    return bad, sample


def main():
    prefix, sizes = sys.argv[1], [int(s) for s in sys.argv[2:]]
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=dev)
    results, samples = [], {}
    for op in OPS:
        for size in sizes:
            n = size // 2
            if n % world != 0 or n == 0:
                continue
            x, out = buffers(op, n, rank, world, dev)
            us = timed(op, x, out, dev, local)
            del x, out
            bad, samples["%s/%d" % (op, size)] = checked(op, n, rank, world, dev)
            t = torch.tensor([bad], device=dev)
            dist.all_reduce(t)  # wrong elements over every rank
            results.append({"op": op, "bytes": size, "us": us, "wrong": int(t.item())})
            torch.cuda.empty_cache()
    torch.save(samples, "%s.rank%d.pt" % (prefix, rank))
    if rank == 0:
        with open(prefix + ".json", "w") as f:
            json.dump({"world": world, "results": results}, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

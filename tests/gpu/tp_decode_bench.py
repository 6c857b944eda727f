#!/usr/bin/env python3
"""A tensor-parallel decode step with NCCL vs with ccltune's runtime (issue 15).

Llama-3-8B-shaped layers (hidden 4096, 32 query / 8 KV heads of 128, MLP 14336, RMSNorm),
random bf16 weights, split Megatron-style over TP = world size ranks: QKV and gate/up are
column-parallel, the attention output and down projections row-parallel, each followed by
an all-reduce of batch x 4096 bf16 (8 KiB per token). Attention reads a KV cache of
--context tokens (scaled dot-product attention, GQA). One step = --layers layers for a batch
of new tokens. Timed per collective: "nccl" (dist.all_reduce), "ccltune" (ccltune.torch
all_reduce on the matmul's ordinary output), "ccltune-pool" (the row-parallel matmuls write
into the runtime's pool, where every kernel applies), and "none" (no collective: the
compute alone, so share = 1 - none / nccl is the collectives' share of the step). Graph
mode captures the whole step in a CUDA graph, eager runs it op by op. Per (batch, mode,
variant): 3 warm-up steps, then --rounds rounds of [barrier, CUDA events around --steps
steps], a round's time MAX over ranks, the median round reported in ms per step.
--fused: the ccltune variants run each all-reduce with the residual add and the next RMSNorm
as one call (ccltune.torch.all_reduce_residual_rmsnorm, issue 16), fused where a fused winner
applies (ccltune-pool: residual and normalised output in the pool too).

    PYTHONPATH=runtime/python CCLTUNE_LIBRARY=... python3 tests/gpu/tp_decode_bench.py \
        --gpus 4 --winners winners.json
"""
import argparse
import os
import statistics
import sys
import tempfile

import rank_processes

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, INTER = 4096, 32, 8, 128, 14336
VARIANTS = ("nccl", "ccltune", "ccltune-pool", "none")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gpus", type=int, default=None)
    p.add_argument("--winners", help="ccltune results file (export --format json)")
    p.add_argument("--layers", type=int, default=32)
    p.add_argument("--context", type=int, default=1024)
    p.add_argument("--batches", default="1,8,64")
    p.add_argument("--modes", default="graph,eager", help="graph, eager or both")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--fused", action="store_true",
                   help="ccltune variants: all-reduce + residual + RMSNorm in one call")
    a = p.parse_args(argv)
    a.batches = [int(b) for b in a.batches.split(",")]
    a.modes = [m for m in ("graph", "eager") if m in a.modes.split(",")]
    return a


class Model:
    def __init__(self, torch, tp, layers, batch, context, gen):
        def w(*shape):
            return (torch.randn(*shape, generator=gen, device="cuda") * 0.02).to(torch.bfloat16)
        self.torch, self.tp, self.batch = torch, tp, batch
        self.nh, self.nkv = HEADS // tp, max(1, KV_HEADS // tp)
        q, kv = self.nh * HEAD_DIM, self.nkv * HEAD_DIM
        self.layers = [dict(wqkv=w(HIDDEN, q + 2 * kv), wo=w(q, HIDDEN),
                            w13=w(HIDDEN, 2 * INTER // tp), w2=w(INTER // tp, HIDDEN),
                            n1=torch.ones(HIDDEN, device="cuda", dtype=torch.bfloat16),
                            n2=torch.ones(HIDDEN, device="cuda", dtype=torch.bfloat16),
                            k=w(batch, self.nkv, context, HEAD_DIM),
                            v=w(batch, self.nkv, context, HEAD_DIM)) for _ in range(layers)]

    def rms(self, x, g):
        t = self.torch
        v = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * t.rsqrt(v + 1e-5)).to(x.dtype) * g

    def step(self, x, reduce, out_bufs, fused=None):
        """One decode step; reduce(t) all-reduces t in place; out_bufs: per-layer pair of
        tensors the row-parallel matmuls write into (None: fresh tensors); fused(t, x, g):
        x += all-reduce(t) in place, returns RMSNorm(x) * g (None: reduce, add, norm)."""
        t, F = self.torch, self.torch.nn.functional
        h = self.rms(x, self.layers[0]["n1"]) if fused else None
        for i, L in enumerate(self.layers):
            if fused is None:
                h = self.rms(x, L["n1"])
            qkv = h @ L["wqkv"]
            q, k, v = qkv.split([self.nh * HEAD_DIM, self.nkv * HEAD_DIM, self.nkv * HEAD_DIM], -1)
            q = q.view(self.batch, self.nh, 1, HEAD_DIM)
            a = F.scaled_dot_product_attention(q, L["k"], L["v"], enable_gqa=True)
            a = a.reshape(self.batch, self.nh * HEAD_DIM)
            o = t.mm(a, L["wo"], out=out_bufs[i][0]) if out_bufs else a @ L["wo"]
            if fused:
                h = fused(o, x, L["n2"])
            else:
                reduce(o)
                x = x + o
                h = self.rms(x, L["n2"])
            g, u = (h @ L["w13"]).chunk(2, -1)
            d = t.mm(F.silu(g) * u, L["w2"], out=out_bufs[i][1]) if out_bufs else (F.silu(g) * u) @ L["w2"]
            if fused and i + 1 < len(self.layers):
                h = fused(d, x, self.layers[i + 1]["n1"])
            else:
                reduce(d)
                x = x + d
        return x


def rank_main(rank, world, args, tmp, queue):
    os.environ.update(rank_processes.MULTICAST_OFF)
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method="file://" + os.path.join(tmp, "pg"), rank=rank,
                            world_size=world, device_id=torch.device("cuda", rank))
    import ccltune.torch as ct
    need = (2 * args.layers + 2) * sum(args.batches) * HIDDEN * 2
    comm = ct.Communicator(results_file=args.winners, pool_bytes=need + (64 << 20))
    bar = torch.zeros(1, device="cuda")
    rows = []
    for batch in args.batches:
        gen = torch.Generator(device="cuda").manual_seed(7 + rank)
        model = Model(torch, world, args.layers, batch, args.context, gen)
        pool = [(comm.empty(batch, HIDDEN), comm.empty(batch, HIDDEN)) for _ in range(args.layers)]
        x0 = torch.randn(batch, HIDDEN, device="cuda", generator=gen).to(torch.bfloat16)
        reducers = {"nccl": lambda t: dist.all_reduce(t),
                    "ccltune": lambda t: ct.all_reduce(t, comm),
                    "ccltune-pool": lambda t: ct.all_reduce(t, comm),
                    "none": lambda t: None}
        # --fused: the residual stream is updated in place (a copy of x0; pooled for the pool
        # variant, with its normalised output, so fused winners apply there).
        resid = {"ccltune": x0.clone(), "ccltune-pool": comm.empty(batch, HIDDEN)}
        resid["ccltune-pool"].copy_(x0)
        hbuf = comm.empty(batch, HIDDEN)
        fusers = {"ccltune": lambda t, r, g: ct.all_reduce_residual_rmsnorm(t, r, g, 1e-5, comm,
                                                                             out=t),
                  "ccltune-pool": lambda t, r, g: ct.all_reduce_residual_rmsnorm(t, r, g, 1e-5,
                                                                                  comm, out=hbuf)}
        for mode in args.modes:
            for var in VARIANTS:
                bufs = pool if var == "ccltune-pool" else None
                if args.fused and var in fusers:
                    # the last layer's MLP all-reduce has no norm after it: the reducer
                    run = lambda: model.step(resid[var], reducers[var], bufs, fusers[var])
                else:
                    run = lambda: model.step(x0, reducers[var], bufs)
                for _ in range(3):
                    run()
                torch.cuda.synchronize()
                if mode == "graph":
                    g = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(g):
                        run()
                    run = g.replay
                times = []
                for _ in range(args.rounds):
                    dist.all_reduce(bar)
                    torch.cuda.synchronize()
                    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    s.record()
                    for _ in range(args.steps):
                        run()
                    e.record()
                    e.synchronize()
                    times.append(s.elapsed_time(e) / args.steps)
                t = torch.tensor(times, device="cuda", dtype=torch.float64)
                dist.all_reduce(t, op=dist.ReduceOp.MAX)
                rows.append((batch, mode, var, statistics.median(t.tolist())))
        del model, pool, resid, hbuf
        torch.cuda.empty_cache()
    if args.fused:
        choices = {b: comm.epilogue_choice("residual_rmsnorm", b, HIDDEN) for b in args.batches}
        pooled = {b: comm.epilogue_choice("residual_rmsnorm", b, HIDDEN, pooled=True)
                  for b in args.batches}
    else:
        choices = {b: comm.choice("all_reduce", b * HIDDEN * 2) for b in args.batches}
        pooled = {b: comm.choice("all_reduce", b * HIDDEN * 2, pooled=True) for b in args.batches}
    comm.destroy()
    dist.destroy_process_group()
    if rank == 0:
        queue.put((rows, choices, pooled))


def table(world, rows, choices, pooled, modes):
    by = {(b, m, v): t for b, m, v, t in rows}
    out = ["| TP | batch | mode | NCCL step (ms) | runtime step (ms) | runtime, pooled (ms) | "
           "no collective (ms) | speedup (runtime / pooled) | collective share NCCL / runtime "
           "/ pooled | runtime runs (plain / pooled) |", "|" + "---|" * 10]
    for b in sorted({r[0] for r in rows}):
        for m in modes:
            n, c, p, z = (by[(b, m, v)] for v in VARIANTS)
            share = lambda t: "%.0f%%" % (100 * max(0.0, 1 - z / t))
            out.append("| %d | %d | %s | %.3f | %.3f | %.3f | %.3f | %.3fx / %.3fx | %s / %s / %s | "
                       "%s / %s |" % (world, b, m, n, c, p, z, n / c, n / p, share(n), share(c),
                                      share(p), choices[b], pooled[b]))
    return "\n".join(out)


def main(argv):
    args = parse_args(argv)
    import torch
    import torch.multiprocessing as mp
    world = args.gpus or torch.cuda.device_count()
    tmp = tempfile.mkdtemp(prefix="tp-decode-")
    ctx = mp.get_context("spawn")
    q = ctx.SimpleQueue()
    mp.start_processes(rank_main, args=(world, args, tmp, q), nprocs=world, join=True,
                       start_method="spawn")
    rows, choices, pooled = q.get()
    print("Llama-3-8B-shaped decode step, %d layers, context %d, TP %d, %s%s" % (
        args.layers, args.context, world, torch.cuda.get_device_name(0),
        ", ccltune all-reduce + residual + RMSNorm fused (--fused)" if args.fused else ""))
    print(table(world, rows, choices, pooled, args.modes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""All-reduce + residual add + RMSNorm (issue 16): PyTorch vs ccltune, one process per GPU.

What follows every row-parallel layer of tensor-parallel inference, bf16, per (hidden,
tokens, mode), three ways:
  torch   dist.all_reduce(x), then residual += x, then F.rms_norm(residual) * weight
          (what a framework without a fused op runs: three launches);
  nccl    ccltune.torch.all_reduce_residual_rmsnorm over a communicator whose results file
          holds no winners: NCCL's all-reduce + ccltune's separate epilogue kernel;
  winner  the same op over a communicator with the winners of --winners (`ccltune export
          --format json` of an epilogue sweep), input, out and residual in the runtime's
          pool, so fused winners apply (the table says which choice ran).
Graph mode captures --steps calls in one CUDA graph and replays it; eager runs them one by
one. Per point: 3 warm-up calls, then --rounds rounds of [barrier, CUDA events around
--steps calls], a round's time the MAX over ranks, the median round reported in us per call.
Before timing, one call of each on the same fresh inputs is compared with `torch` (bf16,
2e-2 relative + 2e-2 absolute): the `check` column. Values drift while timing (the inputs
are not refilled); only the time is read there.

    PYTHONPATH=runtime/python CCLTUNE_LIBRARY=.../libccltune.so.0 \\
        python3 tests/gpu/epilogue_bench.py --gpus 4 --winners winners.json
"""
import argparse
import os
import statistics
import sys
import tempfile

ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
       "NVSHMEM_DISABLE_NVLS": "1"}
VARIANTS = ("torch", "nccl", "winner")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gpus", type=int, default=None, help="ranks (2..N; default every GPU)")
    p.add_argument("--winners", required=True, help="results file with the epilogue winners")
    p.add_argument("--fingerprint", default=None, help="pin the fingerprint the winners carry")
    p.add_argument("--hidden", default="4096,8192")
    p.add_argument("--tokens", default="1,8,32,128,512,2048")
    p.add_argument("--eps", type=float, default=1e-5)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=20)
    a = p.parse_args(argv)
    a.hidden = [int(h) for h in a.hidden.split(",")]
    a.tokens = [int(t) for t in a.tokens.split(",")]
    return a


class Point:
    """One (hidden, tokens) point's tensors on this rank, filled alike for every variant."""

    def __init__(self, torch, pooled, hidden, tokens, rank):
        bf = torch.bfloat16
        gen = torch.Generator(device="cuda").manual_seed(11 + rank)
        self.x0 = torch.randn(tokens, hidden, device="cuda", generator=gen).to(bf)
        gen_shared = torch.Generator(device="cuda").manual_seed(5)  # same on every rank
        self.r0 = torch.randn(tokens, hidden, device="cuda", generator=gen_shared).to(bf)
        self.w = (1 + 0.1 * torch.randn(hidden, device="cuda", generator=gen_shared)).to(bf)
        self.x, self.r, self.out = self.x0.clone(), self.r0.clone(), torch.empty_like(self.x0)
        # The winner's operands: the front of the three pooled buffers.
        self.px, self.pr, self.pout = (b[:tokens * hidden].view(tokens, hidden) for b in pooled)

    def refill(self):
        for t, src in ((self.x, self.x0), (self.r, self.r0), (self.px, self.x0), (self.pr, self.r0)):
            t.copy_(src)


def make_calls(torch, dist, ct, pt, plain, tuned, eps):
    F = torch.nn.functional
    hidden = pt.x.shape[-1]

    def torch_call():
        dist.all_reduce(pt.x)
        pt.r.add_(pt.x)
        return F.rms_norm(pt.r, (hidden,), pt.w, eps)

    def nccl_call():
        return ct.all_reduce_residual_rmsnorm(pt.x, pt.r, pt.w, eps, plain, out=pt.out)

    def winner_call():
        return ct.all_reduce_residual_rmsnorm(pt.px, pt.pr, pt.w, eps, tuned, out=pt.pout)

    return {"torch": torch_call, "nccl": nccl_call, "winner": winner_call}


def check(torch, pt, calls):
    """Each variant once on the same fresh inputs; True when out and residual match torch."""
    got = {}
    for v in VARIANTS:
        pt.refill()
        out = calls[v]()
        r = pt.pr if v == "winner" else pt.r
        got[v] = (out.float().clone(), r.float().clone())
    ok = True
    for v in ("nccl", "winner"):
        for a, b in zip(got[v], got["torch"]):
            ok = ok and torch.allclose(a, b, rtol=2e-2, atol=2e-2)
    return ok


def time_variant(torch, dist, run_steps, mode, rounds, steps, bar):
    for _ in range(3):
        run_steps(1)
    torch.cuda.synchronize()
    if mode == "graph":
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            with torch.cuda.graph(g, stream=s):
                run_steps(steps)
        torch.cuda.current_stream().wait_stream(s)
        launch = g.replay
    else:
        def launch():
            run_steps(steps)
    times = []
    for _ in range(rounds):
        dist.all_reduce(bar)
        torch.cuda.synchronize()
        b, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        b.record()
        launch()
        e.record()
        e.synchronize()
        times.append(b.elapsed_time(e) * 1000.0 / steps)
    t = torch.tensor(times, device="cuda", dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return statistics.median(t.tolist())


def rank_main(rank, world, args, tmp, queue):
    os.environ.update(ENV)
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method="file://" + os.path.join(tmp, "pg"), rank=rank,
                            world_size=world, device_id=torch.device("cuda", rank))
    import ccltune.torch as ct
    biggest = max(args.tokens) * max(args.hidden) * 2
    plain = ct.Communicator(results_file=os.path.join(tmp, "no-winners.json"),
                            fingerprint=args.fingerprint)
    tuned = ct.Communicator(results_file=args.winners, fingerprint=args.fingerprint,
                            pool_bytes=3 * biggest + (16 << 20))
    # Pooled once, at the largest point (collective: same sizes, same order on every rank).
    pooled = [tuned.empty(biggest // 2, dtype=torch.bfloat16) for _ in range(3)]
    bar = torch.zeros(1, device="cuda")
    rows = []
    for hidden in args.hidden:
        for tokens in args.tokens:
            pt = Point(torch, pooled, hidden, tokens, rank)
            calls = make_calls(torch, dist, ct, pt, plain, tuned, args.eps)
            ok = check(torch, pt, calls)
            okt = torch.tensor([1.0 if ok else 0.0], device="cuda")
            dist.all_reduce(okt, op=dist.ReduceOp.MIN)
            times = {}
            for mode in ("graph", "eager"):
                for v in VARIANTS:
                    def run_steps(n, call=calls[v]):
                        for _ in range(n):
                            call()
                    times[(mode, v)] = time_variant(torch, dist, run_steps, mode, args.rounds,
                                                    args.steps, bar)
            choice = tuned.epilogue_choice("residual_rmsnorm", tokens, hidden, torch.bfloat16,
                                           pooled=True)
            rows.append((hidden, tokens, times, choice, okt.item() == 1.0))
            del pt, calls
    plain.destroy()
    tuned.destroy()
    dist.destroy_process_group()
    if rank == 0:
        queue.put(rows)


def table(world, rows):
    out = ["| TP | hidden | tokens | mode | PyTorch unfused (us) | ccltune NCCL + kernel (us) | "
           "ccltune winner (us) | winner | PyTorch / winner | NCCL + kernel / winner | check |",
           "|" + "---|" * 11]
    for hidden, tokens, times, choice, ok in rows:
        for mode in ("graph", "eager"):
            t, n, w = (times[(mode, v)] for v in VARIANTS)
            out.append("| %d | %d | %d | %s | %.1f | %.1f | %.1f | `%s` | %.2fx | %.2fx | %s |" % (
                world, hidden, tokens, mode, t, n, w, choice, t / w, n / w,
                "ok" if ok else "MISMATCH"))
    return "\n".join(out)


def main(argv):
    args = parse_args(argv)
    os.environ.update(ENV)
    import torch
    import torch.multiprocessing as mp
    world = args.gpus or torch.cuda.device_count()
    if world < 2:
        print("SKIP: needs 2 GPUs, found %d" % torch.cuda.device_count())
        return 0
    tmp = tempfile.mkdtemp(prefix="epilogue-bench-")
    with open(os.path.join(tmp, "no-winners.json"), "w") as f:
        f.write("[]")
    q = mp.get_context("spawn").SimpleQueue()
    mp.start_processes(rank_main, args=(world, args, tmp, q), nprocs=world, join=True,
                       start_method="spawn")
    rows = q.get()
    print("all-reduce + residual add + RMSNorm, bf16, TP %d, %s; us per call (max over ranks, "
          "median of %d rounds of %d)" % (world, torch.cuda.get_device_name(0), args.rounds,
                                          args.steps))
    print(table(world, rows))
    return 0 if all(r[4] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

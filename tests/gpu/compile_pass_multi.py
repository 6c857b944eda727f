#!/usr/bin/env python3
"""ccltune.torch.enable()'s pooled slots across ranks (issue 23, on 2+ GPUs): N processes,
one GPU each, the tensor-parallel block of compile_pass_check.py at a decode shape (bf16,
1 x 8 tokens, hidden 4096), compiled with mode="reduce-overhead" after
enable(pool="auto"), with the runtime test's winners (runtime_winners_file: for 8 x 4096
bf16 a fused one-shot on pooled buffers, an unfused choice on plain ones), so "auto" arranges
every site. Per rank it checks:
- the runtime's choices for the shape (pooled: fused; plain: another one);
- every fused site pooled (input written by the mm, residual chained), the fused op run on
  slots only, the slots at one offset on every rank (compile_pool's check);
- outputs equal to the eager model's (NCCL's all-reduce through c10d) within 5e-2: a
  reduction across real peers, so a slot at another offset on a peer would show;
and times, in the same run, the compiled step with pool="auto" against pool="never" (the
same graph on ordinary tensors: the runtime's plain choice, then the separate norm kernel).
The winners are the test file's, not tuned ones: the timing compares buffer arrangements on
those choices, not ccltune against NCCL.

    build/tests/gpu/runtime_winners_file 2 /tmp/w.json
    PYTHONPATH=runtime/python CCLTUNE_LIBRARY=build/runtime/libccltune.so.0 \\
        python3 tests/gpu/compile_pass_multi.py --ranks 2 --winners /tmp/w.json \\
        --fingerprint runtime-gpu-test --out $OUT
or with `ccltune tune` winners of the same GPUs (`ccltune export --format json`), without
--fingerprint: then "auto" pools the sites only where the tuned choices differ.
Writes --out/compile-pass-multi.json. Exit 0 all ranks passed, 1 otherwise, 77 no GPUs.
"""
import argparse
import json
import os
import sys
import tempfile

TOKENS, HIDDEN = 8, 4096


def rank_main(rank, world, a, tmp):
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(tmp, "inductor-%d" % rank)
    import torch
    import torch.distributed as dist
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import compile_pass_check as cpc
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method="file://" + os.path.join(tmp, "pg"), rank=rank,
                            world_size=world, device_id=torch.device("cuda", rank))
    import ccltune.torch as ct
    from ccltune import compile_pass
    env = cpc.Env(torch, dist, ct)
    bf = torch.bfloat16
    comm = ct.enable(pool="auto", pool_bytes=256 << 20, results_file=a.winners,
                     fingerprint=a.fingerprint)[0]
    r = {"rank": rank, "failures": [],
         "choice_pooled": comm.epilogue_choice("residual_rmsnorm", TOKENS, HIDDEN, bf, True),
         "choice_plain": comm.epilogue_choice("residual_rmsnorm", TOKENS, HIDDEN, bf, False)}
    differs = r["choice_pooled"] != r["choice_plain"]
    if a.fingerprint == "runtime-gpu-test" and ("-fused" not in r["choice_pooled"] or not differs):
        r["failures"].append("choices %s / %s: want a fused pooled winner and another plain one"
                             % (r["choice_pooled"], r["choice_plain"]))
    torch.manual_seed(0)  # the same weights everywhere; each rank's input its own
    model = cpc.tp_model(env, bf, hidden=HIDDEN, heads=32, inter=HIDDEN)
    xs = [torch.randn(1, TOKENS, HIDDEN, device="cuda",
                      generator=torch.Generator(device="cuda").manual_seed(10 * rank + i)).to(bf)
          for i in range(3)]
    with torch.no_grad():
        times = {}
        for policy in ("auto", "never"):
            ct.enable(pool=policy)
            torch._dynamo.reset()
            before = dict(compile_pass.calls)
            step = torch.compile(model, fullgraph=True, dynamic=False, mode="reduce-overhead")
            for i, x in enumerate(xs):
                got = [t.clone() for t in step(x)]
                want = model(x)
                errs = [cpc.rel_err(torch, g, w) for g, w in zip(got, want)]
                r.setdefault("rel_err_" + policy, []).append(max(errs))
                if max(errs) > 5e-2:
                    r["failures"].append("pool=%s call %d: rel. error %.2e" % (policy, i, max(errs)))
            r["calls_" + policy] = {k: v - before.get(k, 0) for k, v in compile_pass.calls.items()
                                    if v != before.get(k, 0)}
            times[policy] = time_step(torch, dist, step, xs[0], a.iters)
        r["step_us"] = times
        r["auto_over_never"] = times["auto"] / times["never"]
    reports = [f for rep in ct.explain() for f in rep.fused]
    r["pool_reports"] = [f["pool"] for f in reports]
    auto = [f["pool"] for f in reports][:4]
    # "auto" pools a site exactly where the two choices differ.
    if len(auto) != 4 or any(p["arranged"] != differs for p in auto):
        r["failures"].append("pool=auto sites: %s, want 4 %s" % (auto, "arranged" if differs else
                                                                 "left unpooled"))
    if differs and r["calls_auto"].get("pooled_arranged", 0) < 4:
        r["failures"].append("fused op on slots %s times, want 4 or more (calls %s)"
                             % (r["calls_auto"].get("pooled_arranged", 0), r["calls_auto"]))
    if r["calls_never"].get("pooled_arranged"):
        r["failures"].append("pool=never ran on slots")
    dist.barrier()
    with open(os.path.join(a.out, "rank-%d.json" % rank), "w") as f:
        json.dump(r, f, indent=1, default=str)
    dist.destroy_process_group()


def time_step(torch, dist, step, x, iters):
    """Median per-step time (µs) over `iters` replays, all ranks in step (a barrier first)."""
    for _ in range(10):
        step(x)
    torch.cuda.synchronize()
    dist.barrier()
    start = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for s, e in zip(start, end):
        s.record()
        step(x)
        e.record()
    torch.cuda.synchronize()
    t = sorted(s.elapsed_time(e) * 1000 for s, e in zip(start, end))
    return t[len(t) // 2]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--winners", required=True, help="runtime_winners_file's output")
    p.add_argument("--fingerprint", default=None,
                   help="the records' fingerprint (runtime-gpu-test for runtime_winners_file's; "
                        "default: this communicator's, as for `ccltune tune` winners)")
    p.add_argument("--iters", type=int, default=200)
    p.add_argument("--out", default=os.environ.get("OUT", "."))
    a = p.parse_args()
    os.environ.update({"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                       "NVSHMEM_DISABLE_NVLS": "1"})
    import torch
    if torch.cuda.device_count() < a.ranks:
        print("SKIP: %d GPUs, %d ranks asked" % (torch.cuda.device_count(), a.ranks))
        return 77
    os.makedirs(a.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="ccltune-compile-multi-")
    torch.multiprocessing.spawn(rank_main, args=(a.ranks, a, tmp), nprocs=a.ranks, join=True)
    ranks = [json.load(open(os.path.join(a.out, "rank-%d.json" % r))) for r in range(a.ranks)]
    with open(os.path.join(a.out, "compile-pass-multi.json"), "w") as f:
        json.dump(ranks, f, indent=1)
    for r in ranks:
        print("rank %d: %s; choices pooled %s, plain %s; rel err auto %s never %s; step us "
              "auto %.1f never %.1f (auto/never %.3f); calls auto %s"
              % (r["rank"], "PASSED" if not r["failures"] else "FAILED " + "; ".join(r["failures"]),
                 r["choice_pooled"], r["choice_plain"],
                 ["%.1e" % e for e in r["rel_err_auto"]], ["%.1e" % e for e in r["rel_err_never"]],
                 r["step_us"]["auto"], r["step_us"]["never"], r["auto_over_never"], r["calls_auto"]))
    return 1 if any(r["failures"] for r in ranks) else 0


if __name__ == "__main__":
    sys.exit(main())

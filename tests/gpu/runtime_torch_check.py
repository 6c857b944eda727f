#!/usr/bin/env python3
"""ccltune.torch on GPUs: the custom ops against torch.distributed (NCCL), one process per GPU.

Per rank: a Communicator over the world group with a winners file that sends each size to a
different choice (LL/push/pull one-shot, two-shot, rs+ag, ctas; on one GPU the rule's NCCL
substitutes run), then all_reduce (in place and out of place, plain and pooled tensors),
all_gather and reduce_scatter, bf16/fp16/fp32, eager, captured in a CUDA graph and under
torch.compile(fullgraph=True), each compared with dist.* on the same input (fp32 1e-5,
bf16/fp16 2e-2 relative). Then all_reduce_residual_rmsnorm and all_reduce_bias (issue 16)
with fused winners (LL, pull, two-shot) and an unfused one, plain and pooled, eager, in a CUDA
graph and under torch.compile, against dist.all_reduce + add + F.rms_norm in fp32. Prints one
line per rank and exits non-zero on any mismatch.

    PYTHONPATH=runtime/python CCLTUNE_LIBRARY=build/runtime/libccltune.so.0 \
        python3 tests/gpu/runtime_torch_check.py --gpus 2
"""
import argparse
import json
import os
import sys
import tempfile

WINNERS = {  # allReduce bytes -> winner (the runtime test's kinds)
    2048: "oneshot:blocks=16,threads=256,mode=ll",
    8192: "oneshot:blocks=16,threads=512,mode=push",
    32768: "oneshot:blocks=32,threads=256,mode=pull",
    131072: "twoshot:blocks=64,threads=256,mode=pull",
    524288: "twoshot:blocks=64,threads=256,mode=push,unroll=2",
    2 << 20: "rs+ag",
    8 << 20: "nccl:ctas=8",
}
FP = "runtime-torch-check"
HIDDEN = 4096
EPILOGUE_WINNERS = {  # tokens -> winner of residualRmsNorm (and bias), hidden 4096
    1: "oneshot-fused:blocks=16,mode=ll,threads=256",
    8: "oneshot-fused:blocks=32,mode=pull,threads=256",
    64: "twoshot-fused:blocks=64,mode=pull,threads=256",
    256: "twoshot:blocks=64,threads=256,mode=pull",
}
ESIZE = {"bf16": 2, "fp16": 2, "fp32": 4}


def record(op, dtype, redop, nbytes, winner, world, epilogue=None):
    def ch(name, us):
        return {"name": name, "params": {}, "timeUs": us, "minUs": us, "maxUs": us,
                "status": "ok", "busbwGBs": 1.0}
    choices = [ch("nccl", 10.0), ch(winner, 1.0), ch("nccl:ctas=4", 5.0), ch("rs+ag", 4.0)]
    if epilogue:
        choices.append(ch("oneshot:blocks=16,threads=256,mode=ll", 3.0))  # plain buffers'
    extra = {"epilogue": epilogue} if epilogue else {}
    return dict(extra, **{"schema": 1, "fingerprint": FP, "op": op, "dtype": dtype, "redop": redop,
            "bytes": nbytes, "winner": winner, "winnerParams": {}, "timeUs": 1.0,
            "defaultTimeUs": 10.0, "speedupVsDefault": 10.0, "busbwGBs": 1.0,
            "choices": choices, "worldSize": world, "tunedAt": "2026-11-24T00:00:00Z",
            "jobId": "check", "attempt": 0, "toolVersion": "check"})


def winners_file(path, world):
    recs = [record("allReduce", d, r, b, w, world) for b, w in WINNERS.items()
            for d in ("bf16", "fp16", "fp32") for r in ("sum", "max", "min")]
    for kind in ({"kind": "residualRmsNorm", "hidden": HIDDEN, "eps": 1e-5},
                 {"kind": "bias", "hidden": HIDDEN}):
        recs += [record("allReduce", d, "sum", t * HIDDEN * ESIZE[d], w, world, kind)
                 for t, w in EPILOGUE_WINNERS.items() for d in ("bf16", "fp16", "fp32")]
    with open(path, "w") as f:
        json.dump(recs, f)


def epilogue_checks(torch, dist, ct, comm, rank, close, ran):
    """all_reduce_residual_rmsnorm / all_reduce_bias against dist + torch in fp32."""
    F = torch.nn.functional
    eps, n = 1e-5, 0
    biggest = (max(EPILOGUE_WINNERS) + 3) * HIDDEN
    for dt in (torch.bfloat16, torch.float16, torch.float32):
        pooled = [comm.empty(biggest, dtype=dt) for _ in range(3)]
        gen = torch.Generator(device="cuda").manual_seed(99 + rank)
        shared = torch.Generator(device="cuda").manual_seed(98)
        for tokens in list(EPILOGUE_WINNERS) + [13]:
            x = torch.randn(tokens, HIDDEN, generator=gen, device="cuda").to(dt)
            r0 = torch.randn(tokens, HIDDEN, generator=shared, device="cuda").to(dt)
            w = (1 + 0.1 * torch.randn(HIDDEN, generator=shared, device="cuda")).to(dt)
            total = x.float().clone()  # fp32's .float() is x itself: keep x unreduced
            dist.all_reduce(total)
            r_want = r0.float() + total
            out_want = F.rms_norm(r_want, (HIDDEN,), w.float(), eps)
            bias_want = total + w.float()
            px, pr, pout = (b[:tokens * HIDDEN].view(tokens, HIDDEN) for b in pooled)
            what = "%s tokens=%d" % (dt, tokens)
            hows = ("plain", "pooled", "in place", "graph") + (("compile",) if tokens == 8 else ())
            for how in hows:
                xi, ri, out = x.clone(), r0.clone(), None
                if how == "pooled":
                    px.copy_(x)
                    pr.copy_(r0)
                    xi, ri, out = px, pr, pout
                if how == "in place":
                    out = xi
                if how == "graph":
                    g = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(g):
                        got = ct.all_reduce_residual_rmsnorm(xi, ri, w, eps, comm, out=xi)
                    g.replay()
                elif how == "compile":
                    f = torch.compile(lambda a, b: ct.all_reduce_residual_rmsnorm(a, b, w, eps, comm),
                                      fullgraph=True)
                    got = f(xi, ri)
                else:
                    got = ct.all_reduce_residual_rmsnorm(xi, ri, w, eps, comm, out=out)
                torch.cuda.synchronize()
                close(got, out_want, dt, "rmsnorm out %s %s" % (how, what), atol=True)
                close(ri, r_want, dt, "rmsnorm residual %s %s" % (how, what), atol=True)
                n += 2
            close(ct.all_reduce_bias(x, w, comm), bias_want, dt, "bias " + what, atol=True)
            px.copy_(x)
            close(ct.all_reduce_bias(px, w, comm, out=pout), bias_want, dt, "bias pooled " + what,
                  atol=True)
            n += 2
            for pooled_flag in (False, True):
                ran[comm.epilogue_choice("residual_rmsnorm", tokens, HIDDEN, dt,
                                         pooled=pooled_flag)] = 1
    return n


def rank_main(rank, world, tmp, errors):
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method="file://" + os.path.join(tmp, "pg"),
                            rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    import ccltune.torch as ct
    comm = ct.Communicator(results_file=os.path.join(tmp, "winners.json"), fingerprint=FP,
                           pool_bytes=96 << 20, timeout_ms=20000)
    bad, ran, n = [], {}, 0
    tol = {torch.float32: 1e-5, torch.float16: 2e-2, torch.bfloat16: 2e-2}

    def close(got, want, dt, what, atol=False):
        ok = torch.allclose(got.float(), want.float(), rtol=tol[dt],
                            atol=(1e-4 if dt == torch.float32 else 3e-2) if atol else 0)
        if not ok:  # how far off, and where: a precision slip reads unlike garbage
            err = (got.float() - want.float()).abs().flatten()
            i = int(err.argmax())
            bad.append("%s: max |err| %.3g at %d of %d (got %.6g, want %.6g)" % (
                what, float(err[i]), i, err.numel(), float(got.flatten()[i].float()),
                float(want.flatten()[i].float())))

    gen = torch.Generator(device="cuda").manual_seed(1234 + rank)
    pooled = {dt: comm.empty(max(WINNERS) // 2 + 4096, dtype=dt)
              for dt in (torch.bfloat16, torch.float16, torch.float32)}
    for nbytes in list(WINNERS) + [6 * 1024 + 6]:
        for dt in (torch.bfloat16, torch.float16, torch.float32):
            count = max(world, nbytes // torch.empty((), dtype=dt).element_size())
            src = (torch.rand(count, generator=gen, device="cuda") + 0.5).to(dt)
            for op, red in (("sum", dist.ReduceOp.SUM), ("max", dist.ReduceOp.MAX)):
                want = src.clone()
                dist.all_reduce(want, op=red)
                ran[comm.choice("all_reduce", nbytes, dt, op)] = 1
                x = src.clone()
                ct.all_reduce(x, comm, op)
                close(x, want, dt, "all_reduce eager %d %s %s" % (nbytes, dt, op))
                close(ct.all_reduce(src, comm, op, inplace=False), want, dt, "out of place")
                p = pooled[dt][:count]
                p.copy_(src)
                ct.all_reduce(p, comm, op)
                close(p, want, dt, "pooled %d %s %s" % (nbytes, dt, op))
                g = torch.cuda.CUDAGraph()
                y = src.clone()
                s = torch.cuda.Stream()
                s.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(s):
                    ct.all_reduce(y.clone(), comm, op)  # warm-up outside the capture
                torch.cuda.current_stream().wait_stream(s)
                with torch.cuda.graph(g):
                    ct.all_reduce(y, comm, op)
                y.copy_(src)
                g.replay()
                torch.cuda.synchronize()
                close(y, want, dt, "graph %d %s %s" % (nbytes, dt, op))
                n += 4
            ag_want = [torch.empty_like(src) for _ in range(world)]
            dist.all_gather(ag_want, src)
            close(ct.all_gather(src, comm), torch.cat(ag_want), dt, "all_gather %d %s" % (nbytes, dt))
            rs_in = src[: count // world * world].contiguous()
            rs_want = torch.empty(count // world, dtype=dt, device="cuda")
            dist.reduce_scatter_tensor(rs_want, rs_in)
            close(ct.reduce_scatter(rs_in, comm), rs_want, dt, "reduce_scatter %d %s" % (nbytes, dt))
            n += 2
    n += epilogue_checks(torch, dist, ct, comm, rank, close, ran)
    compiled = torch.compile(lambda t: ct.all_reduce(t * 2, comm, inplace=False) + 1, fullgraph=True)
    t = torch.ones(4096, device="cuda", dtype=torch.bfloat16)
    close(compiled(t), torch.full_like(t, 2 * world + 1), torch.bfloat16, "torch.compile")
    n += 1
    torch.cuda.synchronize()
    comm.destroy()
    dist.destroy_process_group()
    print("rank %d: %d checks, %d wrong%s; table choices: %s" % (
        rank, n, len(bad), (" (" + "; ".join(bad[:5]) + ")") if bad else "", ", ".join(sorted(ran))),
        flush=True)
    if bad:
        errors.put(rank)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gpus", type=int, default=None)
    a = p.parse_args()
    os.environ.update({"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                       "NVSHMEM_DISABLE_NVLS": "1"})
    import torch
    import torch.multiprocessing as mp
    world = a.gpus or torch.cuda.device_count()
    if world < 1:
        print("SKIP: no GPU")
        return 0
    tmp = tempfile.mkdtemp(prefix="ccltune-torch-")
    winners_file(os.path.join(tmp, "winners.json"), world)
    ctx = mp.get_context("spawn")
    errors = ctx.SimpleQueue()
    mp.start_processes(rank_main, args=(world, tmp, errors), nprocs=world, join=True,
                       start_method="spawn")
    return 1 if not errors.empty() else 0


if __name__ == "__main__":
    sys.exit(main())

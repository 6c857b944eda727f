#!/usr/bin/env python3
"""A peer that dies must stop the program with an error (issue 36), on 2+ GPUs.

N processes, one GPU each, all-reduce 8 KiB of bf16 ones (expected value N) in a loop and
check EVERY result they read; rank N-1 exits hard (os._exit) after --die-after steps. Modes:
  preload-graph  unmodified torch.distributed, CUDA graph of the all-reduce replayed, run
                 under LD_PRELOAD=libccltune-nccl.so (--shim) with winners that pick our LL
                 one-shot kernel (a results file written here, pinned fingerprint)
  preload-eager  the same, eager calls
  torch-eager    ccltune.torch.all_reduce on a Communicator (libccltune), eager
  torch-graph    the same captured in a CUDA graph and replayed
  compiled       a residual + RMSNorm block compiled after ccltune.torch.enable() (the
                 pass's ops: fused LL on pooled slots, or our LL all-reduce + the norm)
Every survivor must stop with an error within timeout + 5 s of the death, having observed
no wrong result; its output must carry ccltune's message (the rank that did not arrive).
Reports per survivor: how it stopped, seconds from the death to the stop, wrong results
after the death, and what ncclCommGetAsyncError / ccltuneCommGetAsyncError say afterwards.

    PYTHONPATH=runtime/python CCLTUNE_LIBRARY=build/runtime/libccltune.so.0 \\
        python3 tests/gpu/peer_death_check.py --gpus 4 --shim build/runtime/libccltune-nccl.so \\
        --mode all --out $OUT
Writes --out/peer-death.json and a markdown table on stdout. Exit 0 when every mode passed,
1 otherwise, 77 without 2 GPUs.
"""
import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import time

MODES = ("preload-graph", "preload-eager", "torch-eager", "torch-graph", "compiled")
FP = "peer-death-check"
COUNT = 4096  # bf16 elements: 8 KiB
TOKENS, HIDDEN = 8, 4096  # the compiled block
LL = "oneshot:blocks=16,threads=256,mode=ll"
FUSED_LL = "oneshot-fused:blocks=16,mode=ll,threads=256"
MESSAGE = "did not arrive within"  # runtime/failure_watch.cc's FailureMessage


def record(nbytes, winner, world, epilogue=None):
    def ch(name, us):
        return {"name": name, "params": {}, "timeUs": us, "minUs": us, "maxUs": us,
                "status": "ok", "busbwGBs": 1.0}
    choices = [ch("nccl", 10.0), ch(winner, 1.0)] + ([ch(LL, 2.0)] if epilogue else [])
    r = {"schema": 1, "fingerprint": FP, "op": "allReduce", "dtype": "bf16", "redop": "sum",
         "bytes": nbytes, "winner": winner, "winnerParams": {}, "timeUs": 1.0,
         "defaultTimeUs": 10.0, "speedupVsDefault": 10.0, "busbwGBs": 1.0, "choices": choices,
         "worldSize": world, "tunedAt": "2026-11-26T00:00:00Z", "jobId": "peer-death",
         "attempt": 0, "toolVersion": "check"}
    if epilogue:
        r["epilogue"] = epilogue
    return r


def winners_file(path, world):
    recs = [record(COUNT * 2, LL, world),
            record(TOKENS * HIDDEN * 2, FUSED_LL, world,
                   {"kind": "residualRmsNorm", "hidden": HIDDEN, "eps": 1e-5})]
    with open(path, "w") as f:
        json.dump(recs, f)


# ---------------------------------------------------------------- one rank (a child process)

class Events:
    """JSON lines, flushed one by one: what the parent reads even if this process is killed."""

    def __init__(self, path):
        self.f = open(path, "a", buffering=1)

    def __call__(self, kind, **fields):
        self.f.write(json.dumps(dict(fields, event=kind, t=time.time())) + "\n")
        self.f.flush()


def nccl_comm_ptr(dist, torch):
    pg = dist.group.WORLD
    try:
        return pg._get_backend(torch.device("cuda"))._comm_ptr()
    except Exception:  # noqa: BLE001 (older PyTorch: no way to reach the ncclComm_t)
        return None


def async_error_preload(dist, torch):
    """What ncclCommGetAsyncError / ncclGetLastError (the preloaded shim's) say now."""
    ptr = nccl_comm_ptr(dist, torch)
    if ptr is None:
        return "n/a (this PyTorch does not expose the ncclComm_t)"
    g = ctypes.CDLL(None)  # global scope: the preloaded shim's symbols come first
    g.ncclCommGetAsyncError.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
    g.ncclGetLastError.argtypes = [ctypes.c_void_p]
    g.ncclGetLastError.restype = ctypes.c_char_p
    err = ctypes.c_int(-1)
    for _ in range(40):  # the watch's period is 50 ms
        g.ncclCommGetAsyncError(ctypes.c_void_p(ptr), ctypes.byref(err))
        if err.value != 0:
            break
        time.sleep(0.05)
    text = g.ncclGetLastError(ctypes.c_void_p(ptr)) or b""
    return "ncclCommGetAsyncError=%d; ncclGetLastError: %s" % (err.value, text.decode(errors="replace"))


def async_error_runtime(comm):
    from ccltune import _lib
    err = ctypes.c_int(-1)
    _lib.lib().ccltuneCommGetAsyncError(comm._rt, ctypes.byref(err))
    return "ccltuneCommGetAsyncError=%d; %s" % (err.value,
                                                 _lib.lib().ccltuneGetLastError().decode())


def capture(torch, fn):
    """A CUDA graph of fn(), warmed up on a side stream as PyTorch asks."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()

    def replay():
        g.replay()
    # The graph reads fn's tensors by address: they must live as long as it does (freed, the
    # allocator hands their memory on and every replay copies whatever is there).
    replay.inputs = fn
    return replay


def seen_values(torch, step, check):
    """What a wrong result held (the first distinct values), for the report; never raises."""
    try:
        return getattr(check, "values", lambda: [])()
    except Exception as e:  # noqa: BLE001 (a failed context cannot be read: say so)
        return ["unreadable: %s" % type(e).__name__]


def make_step(mode, a, torch, dist, world):
    """(step, check, comm): step() runs one collective; check() is True when its result is
    right (reading it synchronises)."""
    bf = torch.bfloat16
    ones = torch.ones(COUNT, dtype=bf, device="cuda")
    buf = torch.empty_like(ones)
    want = torch.full_like(ones, float(world))
    comm = None
    if mode.startswith("preload"):
        def one():
            buf.copy_(ones)
            dist.all_reduce(buf)
    elif mode.startswith("torch"):
        import ccltune.torch as ct
        comm = ct.Communicator(results_file=a.winners, fingerprint=FP, timeout_ms=a.timeout_ms)

        def one():
            buf.copy_(ones)
            ct.all_reduce(buf, comm)
    else:
        return compiled_step(a, torch, dist, world)
    for _ in range(3):  # eager first: the context exists before any capture
        one()
    torch.cuda.synchronize()
    step = capture(torch, one) if mode.endswith("graph") else one

    def check():
        return bool(torch.equal(buf, want))
    check.values = lambda: torch.unique(buf.float()).tolist()[:4]
    return step, check, comm


def compiled_step(a, torch, dist, world):
    import ccltune.torch as ct
    import torch.distributed._functional_collectives as funcol
    bf = torch.bfloat16
    comm = ct.enable(pool="auto", pool_bytes=64 << 20, results_file=a.winners, fingerprint=FP,
                     timeout_ms=a.timeout_ms)[0]
    group = dist.group.WORLD
    w = torch.ones(HIDDEN, dtype=bf, device="cuda")

    def block(x, r):
        s = r + funcol.all_reduce(x, "sum", group)
        v = s.float()
        out = (v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + 1e-5)).to(bf) * w
        return out, s

    f = torch.compile(block, fullgraph=True, dynamic=False)
    x = torch.ones(TOKENS, HIDDEN, dtype=bf, device="cuda")
    r = torch.zeros_like(x)
    want_s = torch.full_like(x, float(world))  # exact in bf16
    want_out = torch.ones_like(x)  # N / sqrt(N^2 + eps) rounds to 1 in bf16
    got = {}

    def step():
        got["out"], got["s"] = f(x, r)

    def check():
        return bool(torch.equal(got["s"], want_s)) and bool(torch.equal(got["out"], want_out))
    step()
    if not check():
        raise RuntimeError("compiled block wrong before any death")
    return step, check, comm


def rank_main(a):
    rank, world = a.rank, a.world
    ev = Events(os.path.join(a.tmp, "events-%d.jsonl" % rank))
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(a.tmp, "inductor-%d" % rank)
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method="file://" + os.path.join(a.tmp, "pg"), rank=rank,
                            world_size=world, device_id=torch.device("cuda", rank))
    step, check, comm = make_step(a.mode, a, torch, dist, world)
    if a.mode == "compiled":
        from ccltune import compile_pass
        ev("ops", calls=dict(compile_pass.calls),
           pooled=comm.epilogue_choice("residual_rmsnorm", TOKENS, HIDDEN, torch.bfloat16, True),
           plain=comm.epilogue_choice("residual_rmsnorm", TOKENS, HIDDEN, torch.bfloat16, False))
    elif comm is not None:
        ev("ops", choice=comm.choice("all_reduce", COUNT * 2))
    ev("ready")
    wrong, i = 0, 0
    deadline = time.time() + a.run_s
    try:
        while time.time() < deadline:
            i += 1
            step()
            if not check():
                wrong += 1
                ev("wrong", step=i, seen=seen_values(torch, step, check))
            if rank == world - 1 and i == a.die_after:
                ev("death", step=i)
                os._exit(0)
    except Exception as e:  # noqa: BLE001 (what stopped it is the point)
        ev("stopped", step=i, wrong=wrong, error="%s: %s" % (type(e).__name__, str(e)[:1500]))
        try:
            text = async_error_preload(dist, torch) if comm is None else async_error_runtime(comm)
        except Exception as e2:  # noqa: BLE001
            text = "query failed: %s" % e2
        ev("async", text=text)
        os._exit(0)  # no teardown: the peer is gone and the GPU context has failed
    ev("no-stop", step=i, wrong=wrong)
    os._exit(1)


# ---------------------------------------------------------------- the parent

def child_env(a, mode, winners):
    env = dict(os.environ, PYTHONUNBUFFERED="1", CCLTUNE_TIMEOUT_MS=str(a.timeout_ms))
    if mode.startswith("preload"):
        env.update(LD_PRELOAD=a.shim, CCLTUNE_RESULTS_FILE=winners, CCLTUNE_FINGERPRINT=FP)
    return env


def read_events(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip().startswith("{")]


def run_mode(a, mode):
    tmp = tempfile.mkdtemp(prefix="peer-death-%s-" % mode, dir=a.tmp_root)
    winners = os.path.join(tmp, "winners.json")
    winners_file(winners, a.gpus)
    procs, exits = [], {}
    for r in range(a.gpus):
        log = open(os.path.join(tmp, "rank%d.log" % r), "w")
        cmd = [sys.executable, os.path.abspath(__file__), "--child", "--rank", str(r), "--world",
               str(a.gpus), "--mode", mode, "--tmp", tmp, "--winners", winners, "--timeout-ms",
               str(a.timeout_ms), "--die-after", str(a.die_after), "--run-s", str(a.run_s)]
        procs.append(subprocess.Popen(cmd, env=child_env(a, mode, winners), stdout=log,
                                      stderr=subprocess.STDOUT))
    hard = time.time() + a.run_s + 120  # setup and compile time on top of the run
    while len(exits) < len(procs) and time.time() < hard:
        for r, p in enumerate(procs):
            if r not in exits and p.poll() is not None:
                exits[r] = (time.time(), p.returncode)
        time.sleep(0.01)
    for r, p in enumerate(procs):
        if r not in exits:
            p.kill()
            p.wait()
            exits[r] = (time.time(), "killed at the harness deadline")
    return analyse(a, mode, tmp, exits)


def analyse(a, mode, tmp, exits):
    events = {r: read_events(os.path.join(tmp, "events-%d.jsonl" % r)) for r in range(a.gpus)}
    logs = {}
    for r in range(a.gpus):
        with open(os.path.join(tmp, "rank%d.log" % r), errors="replace") as f:
            logs[r] = f.read()
    death = [e for e in events[a.gpus - 1] if e["event"] == "death"]
    res = {"mode": mode, "world": a.gpus, "timeout_ms": a.timeout_ms, "failures": [],
           "ops": [e for e in events[0] if e["event"] == "ops"], "survivors": []}
    if not death:
        res["failures"].append("rank %d never died as planned (exit %s): %s"
                               % (a.gpus - 1, exits[a.gpus - 1][1], logs[a.gpus - 1][-1500:]))
        return res
    t_death = death[0]["t"]
    bound = a.timeout_ms / 1000.0 + 5
    for r in range(a.gpus - 1):
        ev = events[r]
        stopped = [e for e in ev if e["event"] == "stopped"]
        wrong = [e for e in ev if e["event"] == "wrong"]
        asyncs = [e["text"] for e in ev if e["event"] == "async"]
        t_stop = stopped[0]["t"] if stopped else exits[r][0]
        how = stopped[0]["error"] if stopped else "exit %s, no exception seen" % (exits[r][1],)
        ccl_lines = [l for l in logs[r].splitlines() if MESSAGE in l and "ccltune" in l]
        s = {"rank": r, "how": how.splitlines()[0][:300] if how else "",
             "seconds_after_death": round(t_stop - t_death, 3),
             "wrong_after_death": sum(1 for e in wrong if e["t"] >= t_death),
             "wrong_total": len(wrong), "async": asyncs[0] if asyncs else "",
             "message": ccl_lines[0] if ccl_lines else "", "exit": exits[r][1]}
        res["survivors"].append(s)
        if s["seconds_after_death"] > bound:
            res["failures"].append("rank %d stopped %.1f s after the death (bound %.1f s)"
                                   % (r, s["seconds_after_death"], bound))
        if any(e["event"] == "no-stop" for e in ev) or exits[r][1] == "killed at the harness deadline":
            res["failures"].append("rank %d never stopped" % r)
        if s["wrong_total"]:
            res["failures"].append("rank %d observed %d wrong results" % (r, s["wrong_total"]))
        if not (s["message"] or MESSAGE in s["async"] or MESSAGE in how):
            res["failures"].append("rank %d: no ccltune message naming the missing rank" % r)
    if res["failures"]:
        res["log_tails"] = {r: logs[r][-2000:] for r in range(a.gpus)}
    return res


def table(results):
    lines = ["| mode | rank | stopped after death (s) | wrong after death | how it stopped | "
             "ccltune's message | async error query |", "|---|---|---|---|---|---|---|"]
    for res in results:
        for s in res["survivors"]:
            lines.append("| %s | %d | %.2f | %d | %s | %s | %s |" % (
                res["mode"], s["rank"], s["seconds_after_death"], s["wrong_after_death"],
                s["how"].replace("|", "/")[:160], s["message"].replace("|", "/")[:200],
                s["async"].replace("|", "/")[:200]))
        if not res["survivors"]:
            lines.append("| %s | - | - | - | %s | | |" % (res["mode"], "; ".join(res["failures"])))
    return "\n".join(lines)


def gpu_count():
    out = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.device_count())"],
                         capture_output=True, text=True, timeout=120)
    return int(out.stdout.strip() or 0)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gpus", type=int, default=0, help="ranks, one GPU each (0: every GPU)")
    p.add_argument("--mode", default="all", help="one of %s, torch-ops, or all" % ", ".join(MODES))
    p.add_argument("--shim", default=os.environ.get("CCLTUNE_SHIM", ""))
    p.add_argument("--timeout-ms", type=int, default=5000)
    p.add_argument("--die-after", type=int, default=50)
    p.add_argument("--run-s", type=float, default=0, help="survivors' loop bound (0: timeout + 20 s)")
    p.add_argument("--out", default=os.environ.get("OUT", "."))
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    for hidden in ("--rank", "--world"):
        p.add_argument(hidden, type=int, default=0, help=argparse.SUPPRESS)
    for hidden in ("--tmp", "--winners"):
        p.add_argument(hidden, default="", help=argparse.SUPPRESS)
    a = p.parse_args()
    a.run_s = a.run_s or a.timeout_ms / 1000.0 + 20
    if a.child:
        return rank_main(a)
    a.gpus = a.gpus or gpu_count()
    if a.gpus < 2:
        print("SKIP: a peer death needs 2+ GPUs (found %d)" % a.gpus)
        return 77
    modes = {"all": MODES, "torch-ops": ("torch-eager", "torch-graph")}.get(a.mode, (a.mode,))
    if any(m not in MODES for m in modes):
        p.error("--mode %s: not one of %s, torch-ops, all" % (a.mode, ", ".join(MODES)))
    if any(m.startswith("preload") for m in modes) and not os.path.exists(a.shim):
        p.error("--shim %r: the preload modes need libccltune-nccl.so" % a.shim)
    os.makedirs(a.out, exist_ok=True)
    a.tmp_root = tempfile.mkdtemp(prefix="peer-death-")
    results = []
    for m in modes:
        res = run_mode(a, m)
        results.append(res)
        print("%s: %s" % (m, "PASS" if not res["failures"] else "FAIL: " + "; ".join(res["failures"])),
              flush=True)
    with open(os.path.join(a.out, "peer-death.json"), "w") as f:
        json.dump(results, f, indent=1)
    print("\n%d GPUs, CCLTUNE_TIMEOUT_MS=%d, rank %d exits after %d steps; bound: timeout + 5 s\n"
          % (a.gpus, a.timeout_ms, a.gpus - 1, a.die_after))
    print(table(results))
    return 0 if all(not r["failures"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())

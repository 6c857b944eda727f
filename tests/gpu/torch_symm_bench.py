#!/usr/bin/env python3
"""PyTorch symmetric-memory all-reduce, timed the way ccltune times its own kernels.

Measures torch.ops.symm_mem.one_shot_all_reduce and torch.ops.symm_mem.two_shot_all_reduce_
(PyTorch's CUDA symmetric-memory backend, NVLink multicast off) and NCCL's dist.all_reduce as
a reference, bf16 sum, one process per GPU, in CUDA-graph and eager mode. Per size, kernel and
mode: 5 warm-up ops, then --rounds rounds of [1-element all-reduce + synchronize as barrier,
CUDA event, 20 ops back to back (eager) or one replay of a graph that captured 20 ops, CUDA
event]; a round's time is elapsed / 20, MAX over ranks; the kernel's time is the median round
(min and max kept). Eager times include PyTorch's per-call host overhead; hostUs is the median
host time per op of issuing a round (MAX over ranks): where it is near timeUs, the host bounds.
Each symmetric-memory kernel is checked once per size against dist.all_reduce (relative
tolerance 2e-2).

Input data: random bf16 in [0.5, 1.5) in one buffer from symm_mem.empty(), rendezvous'd once
before any op or capture and re-filled before every round; the ops get its leading slice. What
the ops require (torch 2.11): the input must live in symmetric memory (else "input must be
allocated with empty_strided_p2p()"), be contiguous, bf16 or fp32, reduce op "sum", and its
offset and size 4-byte aligned (sizes here are rounded down to multiples of 4 bytes); no size
limit (grids are capped at 24 blocks). one_shot_all_reduce returns a new tensor (empty_like),
two_shot_all_reduce_ works in place. A kernel that raises is recorded "skipped" with the
reason on every rank.

With --ccltune-winners GRAPH.json,EAGER.json (`ccltune export --format json` of a graph-mode
and an eager-mode tune) it also measures ccltune's runtime through ccltune.torch (issue 15):
"ccltune" on a buffer from the runtime's pool (every kernel applies), "ccltune-plain" on an
ordinary tensor (kernels that need the peers' buffers give way to the best that does not),
each mode with the winners tuned in that mode. Needs PYTHONPATH=runtime/python and
CCLTUNE_LIBRARY naming libccltune.so.0.

Run (repository root, a machine with 2-8 GPUs):
    python3 tests/gpu/torch_symm_bench.py --gpus 4 --json $OUT/torch4.json
Flags: --gpus N (default all visible) --min 1KiB --max 64MiB --factor 2 --rounds 5
--timeout-s 300 (the whole run once torch is imported; past it the ranks are killed and the
exit status is 3; 1 when a rank failed) --no-pin (each rank runs on an even share of the cores
local to its GPU unless this is given: gpu_affinity.py says why).
Writes {"tool":"torch", "torchVersion", "worldSize", "gpu", "cores" (per rank, or null),
"records":[{"bytes", "mode", "kernel", "timeUs", "minUs", "maxUs", "hostUs", "status",
"reason"}]} (rank 0, rewritten after every size, "complete": true at the end) and prints a
table.
"""
import argparse
import datetime
import json
import os
import re
import statistics
import sys
import tempfile
import time

import gpu_affinity
import rank_processes

REQUIRED_ENV = rank_processes.MULTICAST_OFF
KERNELS = ("one_shot", "two_shot", "nccl")
CCLTUNE_KERNELS = ("ccltune", "ccltune-plain")
MODES = ("graph", "eager")
WARMUP, OPS, TOL = 5, 20, 2e-2
UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20,
         "mb": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}


def parse_bytes(text):
    m = re.fullmatch(r"\s*(\d+)\s*([A-Za-z]*)\s*", text)
    if not m or m.group(2).lower() not in UNITS:
        raise argparse.ArgumentTypeError(
            "%r is not a size (examples: 1024, 1KiB, 64MiB, 1G; K/M/G are powers of 1024)" % text)
    return int(m.group(1)) * UNITS[m.group(2).lower()]


def fmt_bytes(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return "%d%s" % (n >> shift, unit)
    return "%dB" % n


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gpus", type=int, help="ranks, one per GPU (default: all visible)")
    p.add_argument("--min", type=parse_bytes, default=1024, help="smallest size (default 1KiB)")
    p.add_argument("--max", type=parse_bytes, default=64 << 20, help="largest size (64MiB)")
    p.add_argument("--factor", type=float, default=2.0, help="size step factor (default 2)")
    p.add_argument("--rounds", type=int, default=5, help="timed rounds (default 5)")
    p.add_argument("--json", help="write the records here (rank 0)")
    p.add_argument("--timeout-s", type=float, default=300.0, help="deadline for the whole run")
    p.add_argument("--modes", default="graph,eager", help="graph, eager or both (default)")
    gpu_affinity.add_flag(p)
    p.add_argument("--ccltune-winners", help="GRAPH.json,EAGER.json: also run ccltune's runtime")
    a = p.parse_args(argv)
    if a.min < 4 or a.min % 4:
        p.error("--min must be a multiple of 4 bytes (bf16, 4-byte aligned), got %d" % a.min)
    if a.max < a.min:
        p.error("--max (%d) is below --min (%d)" % (a.max, a.min))
    if not a.factor > 1:
        p.error("--factor must be > 1, got %g" % a.factor)
    if a.rounds < 1:
        p.error("--rounds must be >= 1, got %d" % a.rounds)
    if not a.timeout_s > 0:
        p.error("--timeout-s must be > 0, got %g" % a.timeout_s)
    a.modes = [m for m in MODES if m in a.modes.split(",")]
    if not a.modes:
        p.error("--modes: name graph, eager or both")
    if a.gpus is not None and a.gpus < 2:
        p.error("--gpus must be >= 2, got %d" % a.gpus)
    if a.ccltune_winners:
        files = a.ccltune_winners.split(",")
        if len(files) != 2 or not all(os.path.isfile(f) for f in files):
            p.error("--ccltune-winners must name two existing files: GRAPH.json,EAGER.json")
        a.ccltune_winners = dict(zip(MODES, files))
    if a.json and not os.path.isdir(os.path.dirname(os.path.abspath(a.json))):
        p.error("--json: directory of %s does not exist" % a.json)
    return a


def sizes(a):
    out, s = [], float(a.min)
    while round(s) <= a.max:
        n = int(round(s)) // 4 * 4  # the ops need 4-byte aligned sizes
        if not out or n != out[-1]:
            out.append(n)
        s *= a.factor
    return out


def set_env():
    """Refuses an environment that turns multicast/NVLS on; sets the three variables."""
    bad = ["%s=%s" % (k, os.environ[k]) for k, v in REQUIRED_ENV.items()
           if os.environ.get(k, v) != v]
    if os.environ.get("TORCH_SYMMMEM", "CUDA") != "CUDA":
        bad.append("TORCH_SYMMMEM=%s (only the CUDA backend is measured)"
                   % os.environ["TORCH_SYMMMEM"])
    if bad:
        sys.exit("torch_symm_bench: refusing to run with %s: NVLink multicast/NVLS must stay off "
                 "(unset them or set %s)" % (", ".join(bad),
                                             " ".join("%s=%s" % kv for kv in REQUIRED_ENV.items())))
    os.environ.update(REQUIRED_ENV)


# ----------------------------------------------------------------------------- rank side

class Rank:
    def __init__(self, rank, world, args):
        import torch
        import torch.distributed as dist
        import torch.distributed._symmetric_memory as symm_mem
        self.torch, self.dist, self.rank, self.world, self.args = torch, dist, rank, world, args
        self.dev = torch.device("cuda", rank)
        self.group = dist.group.WORLD.group_name
        self.bar = torch.zeros(1, device=self.dev)
        max_elems = sizes(args)[-1] // 2
        gen = torch.Generator(device=self.dev)
        gen.manual_seed(1000 + rank)
        self.src = (torch.rand(max_elems, generator=gen, device=self.dev) + 0.5).to(torch.bfloat16)
        self.symm = symm_mem.empty(max_elems, dtype=torch.bfloat16, device=self.dev)
        try:  # once, before any op or capture; the ops then find the cached handle
            self.handle = symm_mem.rendezvous(self.symm, self.group)
        except RuntimeError:  # older torch wants the group enabled first
            symm_mem.enable_symm_mem_for_group(self.group)
            self.handle = symm_mem.rendezvous(self.symm, self.group)
        self.plain = torch.empty_like(self.src)  # NCCL's buffer: ordinary memory
        self.backend = symm_mem.get_backend(self.dev) if hasattr(symm_mem, "get_backend") else None
        self.kernels = KERNELS
        if args.ccltune_winners:
            import ccltune.torch as ct
            self.ct = ct
            pool = max_elems * 2 + (16 << 20)
            # Staging: each (choice, size) the runtime runs gets its own partition; two-shot
            # push at 64 MiB alone needs 2 x the message.
            self.ct_comm = {m: ct.Communicator(results_file=f, pool_bytes=pool,
                                               staging_bytes=1 << 30)
                            for m, f in args.ccltune_winners.items()}
            self.ct_pool = {m: c.empty(max_elems, dtype=torch.bfloat16)
                            for m, c in self.ct_comm.items()}
            self.ct_plain = torch.empty_like(self.src)
            self.kernels = KERNELS + CCLTUNE_KERNELS

    def barrier(self):
        self.dist.all_reduce(self.bar)
        self.torch.cuda.synchronize()

    def op(self, kernel, n, mode="graph"):
        """(refill, run, result): run() issues one all-reduce of n elements on the stream."""
        ops = self.torch.ops.symm_mem
        buf = self.plain[:n] if kernel == "nccl" else self.symm[:n]
        if kernel in CCLTUNE_KERNELS:
            buf = (self.ct_pool[mode] if kernel == "ccltune" else self.ct_plain)[:n]
        out = {}

        def refill():
            buf.copy_(self.src[:n])

        def run():
            if kernel == "one_shot":
                out["t"] = ops.one_shot_all_reduce(buf, "sum", self.group)
            elif kernel == "two_shot":
                ops.two_shot_all_reduce_(buf, "sum", self.group)
            elif kernel in CCLTUNE_KERNELS:
                self.ct.all_reduce(buf, self.ct_comm[mode])
            else:
                self.dist.all_reduce(buf)
        return refill, run, lambda: out.get("t", buf)

    def agree(self, err):
        """All ranks learn whether any rank failed, and the first rank's reason."""
        flag = self.torch.tensor([1.0 if err else 0.0], device=self.dev)
        self.dist.all_reduce(flag, op=self.dist.ReduceOp.MAX)
        if flag.item() == 0:
            return None
        errs = [None] * self.world
        self.dist.all_gather_object(errs, err)
        return next("rank %d: %s" % (r, e) for r, e in enumerate(errs) if e)

    def check(self, kernel, n, ref):
        for mode in (MODES if kernel in CCLTUNE_KERNELS else MODES[:1]):
            refill, run, result = self.op(kernel, n, mode)
            refill()
            self.barrier()
            run()
            got = result().float()
            want = ref.float()
            bad = ~((got - want).abs() <= TOL * want.abs())
            if bool(bad.any()):
                i = int(bad.nonzero()[0])
                return "%s: element %d of %d: got %g, want %g (rank %d)" % (
                    mode, i, n, float(got[i]), float(want[i]), self.rank)
        return None

    def prepare(self, kernel, n, mode):
        """Warm-up, and in graph mode capture + one warm replay: (refill, step of OPS ops)."""
        torch = self.torch
        refill, run, _ = self.op(kernel, n, mode)
        refill()
        for _ in range(WARMUP):
            run()
        if mode == "eager":
            def step():
                for _ in range(OPS):
                    run()
            return refill, step
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, capture_error_mode="thread_local"):
            for _ in range(OPS):
                run()
        refill()
        self.barrier()
        graph.replay()
        torch.cuda.synchronize()
        return refill, graph.replay

    def rounds(self, refill, step):
        """Per round: us per op, MAX over ranks."""
        torch = self.torch
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        times, host = [], []
        for _ in range(self.args.rounds):
            refill()
            self.barrier()
            start.record()
            t0 = time.perf_counter()
            step()
            host.append((time.perf_counter() - t0) * 1e6 / OPS)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1000.0 / OPS)
        t = torch.tensor(times + host, dtype=torch.float64, device=self.dev)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX)
        t = t.tolist()
        return t[:len(times)], t[len(times):]

    def size(self, nbytes):
        n = nbytes // 2
        ref = self.src[:n].clone()
        self.dist.all_reduce(ref)
        recs = []
        for kernel in self.kernels:
            wrong = None
            if kernel != "nccl":
                err = None
                try:
                    wrong = self.check(kernel, n, ref)
                    self.torch.cuda.synchronize()
                except Exception as e:  # unsupported size, bad input, ...
                    err = describe(e)
                reason = self.agree(err)
                if reason:
                    recs += [rec(nbytes, m, kernel, None, "skipped", reason) for m in MODES]
                    continue
                wrong = self.agree(wrong)
            for mode in self.args.modes:
                err, prepared = None, None
                try:
                    prepared = self.prepare(kernel, n, mode)
                except Exception as e:
                    err = describe(e)
                reason = self.agree(err)
                if reason:
                    recs.append(rec(nbytes, mode, kernel, None, "skipped", reason))
                    continue
                recs.append(rec(nbytes, mode, kernel, self.rounds(*prepared),
                                "wrong" if wrong else "ok", wrong or ""))
                del prepared  # frees the graph
        return recs


def describe(e):
    lines = str(e).strip().split("\n")
    return "%s: %s" % (type(e).__name__, lines[0][:300] if lines else "")


def rec(nbytes, mode, kernel, timed, status, reason):
    """timed: (round times, host times per op) or None."""
    r = {"bytes": nbytes, "mode": mode, "kernel": kernel, "timeUs": None, "minUs": None,
         "maxUs": None, "hostUs": None, "status": status, "reason": reason}
    if timed:
        times, host = timed
        r.update(timeUs=statistics.median(times), minUs=min(times), maxUs=max(times),
                 hostUs=statistics.median(host))
    return r


def worker(rank, world, args, store_path, cores):
    os.environ.update(REQUIRED_ENV)  # before anything touches CUDA
    gpu_affinity.pin(cores, rank)
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method="file://" + store_path, rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=args.timeout_s),
                            device_id=torch.device("cuda", rank))
    r = Rank(rank, world, args)
    doc = {"tool": "torch", "torchVersion": torch.__version__, "worldSize": world,
           "gpu": torch.cuda.get_device_name(rank), "symmBackend": r.backend,
           "ncclVersion": nccl_version(torch), "complete": False,
           "cores": gpu_affinity.describe_all(cores),
           "kernels": list(r.kernels), "records": []}
    if rank == 0:
        print("torch %s, %d x %s, symmetric-memory backend %s, NCCL %s; ranks on cores %s" % (
            doc["torchVersion"], world, doc["gpu"], doc["symmBackend"], doc["ncclVersion"],
            " | ".join(doc["cores"]) if cores else "unpinned"), flush=True)
    for nbytes in sizes(args):
        recs = r.size(nbytes)
        if rank == 0:
            doc["records"] += recs
            write_json(args.json, doc)
            print_row(nbytes, recs, r.kernels)
    r.barrier()
    if args.ccltune_winners:
        for comm in r.ct_comm.values():
            comm.destroy()
    del r
    if rank == 0:
        doc["complete"] = True
        write_json(args.json, doc)
        print_table(doc)
    dist.destroy_process_group()


def nccl_version(torch):
    v = torch.cuda.nccl.version()
    return ".".join(map(str, v)) if isinstance(v, tuple) else str(v)


def write_json(path, doc):
    if path:
        with open(path + ".tmp", "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(path + ".tmp", path)


def cell(r):
    if r is None:
        return "-"
    if r["status"] == "skipped":
        return "skipped"
    return "%.2f%s" % (r["timeUs"], "" if r["status"] == "ok" else " (wrong)")


def print_row(nbytes, recs, kernels):
    got = {(r["mode"], r["kernel"]): r for r in recs}
    print("%8s  " % fmt_bytes(nbytes) + "  ".join(
        "%s %s %s" % (m, k, cell(got.get((m, k)))) for m in MODES for k in kernels), flush=True)
    for line in dict.fromkeys("          %s: %s: %s" % (r["kernel"], r["status"], r["reason"])
                              for r in recs if r["reason"]):
        print(line, flush=True)


def print_table(doc):
    by = {(r["bytes"], r["mode"], r["kernel"]): r for r in doc["records"]}
    all_sizes = sorted({r["bytes"] for r in doc["records"]})
    for mode in MODES:
        print("\n%s mode, bf16 sum, %d ranks, us per op (median of rounds, max over ranks)"
              % (mode, doc["worldSize"]))
        kernels = doc["kernels"]
        print(("%10s" + " %14s" * len(kernels)) % ("size", *kernels))
        for b in all_sizes:
            print(("%10s" + " %14s" * len(kernels)) % (
                fmt_bytes(b), *(cell(by.get((b, mode, k))) for k in kernels)))


# ----------------------------------------------------------------------------- parent side

def main(argv):
    args = parse_args(argv)
    set_env()
    import torch
    visible = torch.cuda.device_count()
    world = args.gpus or visible
    if world < 2 or world > visible:
        sys.exit("torch_symm_bench: needs 2 or more GPUs, one per rank: %d asked, %d visible"
                 % (world, visible))
    tmp = tempfile.mkdtemp(prefix="torch_symm_bench-")
    cores = gpu_affinity.for_run(args, torch, world)
    return rank_processes.spawn(worker, world, (world, args, os.path.join(tmp, "store"), cores),
                                args.timeout_s, "torch_symm_bench", tmp)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

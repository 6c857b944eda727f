"""One rank late by D µs on the GPU before every all-reduce (issue 45), started like torchrun.

Nothing here knows of ccltune: telemetry_on_device.sh starts it with or without
libccltune-nccl preloaded, NCCL's profiler plugin named and CCLTUNE_TELEMETRY=on, and a real
Prometheus scrapes each rank's /metrics while it runs.

  python3 telemetry_delay_program.py OUT_JSON PHASES...     PHASE = MODE:BYTES:DELAY_US

Per phase (MODE eager or graph; bf16 all-reduce of BYTES; one size per phase, so the `size`
label keeps the phases apart): every rank spins BASE_US (150) and the last rank DELAY_US more
on its stream before each all-reduce (torch.cuda._sleep, calibrated here against CUDA events, and that measured delay
is what the checker compares with), the others do not. eager: calls one by one; graph: 20
calls captured in one graph, replayed; each for 4 s and at least 1100 calls. Every result is checked (the sum of every rank's
input, exact in bf16: small integers). Rank 0 writes OUT_JSON: per phase the delay
measured on the late rank, the wrong elements over every rank, and (eager) rank 0's host
time per step (fill + all-reduce enqueued, before the stream is synchronised). Then every rank stays up
until OUT_JSON.done exists (the checker has queried Prometheus) or 60 s passed.
"""
import json
import os
import sys
import time

import torch
import torch.distributed as dist

# A phase lasts at least PHASE_SECONDS (Prometheus scrapes each second: rates need calls
# across several scrapes) and 1100 calls (every phase then holds the first 64 calls of some
# 1024: the calls every rank samples for NCCL's min-over-ranks split,
# core/telemetry/rank_matcher.h). Host time is taken over the first HOST_CALLS eager steps,
# before the launch queue can fill and make the host wait for the GPU.
PHASE_SECONDS, MIN_CALLS, GRAPH_CALLS, HOST_CALLS = 4.0, 1100, 20, 200
# Every rank's GPU works BASE_US before each all-reduce (the late rank DELAY_US more): the GPU,
# not Python, then sets the pace, so the ranks' only skew at a call is the delay. Without it a
# host-bound loop (tens of µs of Python a step) makes every rank wait for the slowest host:
# sync overhead too, but not the one under test.
BASE_US = 150.0


def cycles_per_us(dev):
    """SM cycles of torch.cuda._sleep per µs, from one long spin timed by CUDA events."""
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(1000)
    a.record()
    torch.cuda._sleep(20_000_000)
    b.record()
    b.synchronize()
    return 20_000_000 / (a.elapsed_time(b) * 1000.0)


def measured_delay_us(cycles):
    """The spin's own time, median of 21, µs."""
    times = []
    for _ in range(21):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        torch.cuda._sleep(cycles)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000.0)
    return sorted(times)[len(times) // 2]


def run_phase(mode, n, cycles, base, late, dev, rank, world):
    x = torch.full((n,), float(rank + 1), device=dev, dtype=torch.bfloat16)
    end = time.time() + PHASE_SECONDS

    def done(calls):
        """Every rank stops after the same call: rank 0's clock decides, by broadcast."""
        if calls < MIN_CALLS or calls % 1000 != 0:  # a host round trip, rarely
            return False
        flag = torch.tensor([1 if time.time() >= end else 0], device=dev)
        dist.broadcast(flag, 0)
        return bool(flag.item())

    def step():
        x.fill_(float(rank + 1))
        torch.cuda._sleep(base + (cycles if late else 0))
        dist.all_reduce(x)

    host_us, calls = 0.0, 0
    if mode == "eager":
        t0 = time.perf_counter()
        for _ in range(HOST_CALLS):
            step()
        host_us = (time.perf_counter() - t0) * 1e6 / HOST_CALLS
        calls = HOST_CALLS
        while not done(calls):
            for _ in range(100):
                step()
            calls += 100
    else:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                step()  # warm-up outside the graph, as graph users do
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(GRAPH_CALLS):
                step()
        while not done(calls):
            g.replay()
            calls += GRAPH_CALLS
    torch.cuda.synchronize()
    want = float(world * (world + 1) // 2)
    return int((x.float() != want).sum().item()), host_us


def main():
    out, phases = sys.argv[1], [p.split(":") for p in sys.argv[2:]]
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=dev)
    late = rank == world - 1
    per_us = cycles_per_us(dev)
    results = []
    for mode, size, delay in phases:
        cycles = int(float(delay) * per_us)
        measured = measured_delay_us(cycles) if late and cycles > 0 else 0.0
        t = torch.tensor([measured], device=dev)
        dist.broadcast(t, world - 1)
        bad, host_us = run_phase(mode, int(size) // 2, cycles, int(BASE_US * per_us), late, dev,
                                 rank, world)
        wrong = torch.tensor([bad], device=dev)
        dist.all_reduce(wrong)
        results.append({"mode": mode, "bytes": int(size), "delay_us": float(delay),
                        "measured_delay_us": t.item(), "wrong": int(wrong.item()),
                        "host_us_per_step": host_us})
    if rank == 0:
        with open(out, "w") as f:
            json.dump({"world": world, "late_rank": world - 1, "phases": results}, f)
    deadline = time.time() + 60
    while not os.path.exists(out + ".done") and time.time() < deadline:
        time.sleep(0.2)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

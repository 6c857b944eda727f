#!/usr/bin/env python3
"""Where ccltune's `nccl` choice and nccl-tests part, near 1 MiB (tune_on_device.sh's
accuracyN section). Per op and size, time per operation in us:
- ccltune: the `nccl` choice of each `acc<N>.<i>` run (CUDA events around a gated round,
  max over ranks, median of rounds; buffers rotate past L2), `acc<N>.long` (rounds of
  200, timed as gated chunks), `acc<N>.graph` (--cuda-graph) and
  `acc<N>.one` (CCLTUNE_BUFFER_ROTATION=0: one buffer set that stays in L2, as nccl-tests
  measures);
- nccl-tests, out of place, its headline time (host clock around the launch loop, max over
  threads): `-n 20` and `-n 200` three times each, `-G 20` (the loop captured as a graph,
  launched 20 times) once, and `-n 20` with NCCL_P2P_DIRECT_DISABLE=1 ("P2P/IPC": the
  transport one process per GPU gets) three times.
Differences are busbw differences (t_ref / t - 1), against the median of the runs.
Usage: accuracy_table.py OUT GPUS"""
import glob
import json
import os
import sys

OPS = {"allGather": "all_gather", "allReduce": "all_reduce", "reduceScatter": "reduce_scatter"}
SIZES = [512 << 10, 1 << 20, 2 << 20, 4 << 20]


def ccltune_times(path):
    """(op, bytes) -> the `nccl` choice's time (us) in one --json summary."""
    if not os.path.exists(path):
        return {}
    out = {}
    for rec in json.load(open(path))["records"]:
        for c in rec["choices"]:
            if c["name"] == "nccl" and c["status"] == "ok":
                out[(rec["op"], rec["bytes"])] = c["timeUs"]
    return out


def results_of(doc):
    """The per-size result objects of one nccl-tests -J file, wherever they sit."""
    if isinstance(doc, dict):
        if "size" in doc and "out_of_place" in doc:
            yield doc
        for v in doc.values():
            yield from results_of(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from results_of(v)


def nccl_tests_times(path):
    """bytes -> time (us) of the out-of-place column of one nccl-tests -J file."""
    try:
        doc = json.load(open(path))
    except (OSError, ValueError):
        return {}
    out = {}
    for r in results_of(doc):
        host = (r.get("out_of_place") or {}).get("time")
        if host is not None:
            out[int(r["size"])] = float(host)
    return out


def fmt(values):
    return ", ".join("%.2f" % v for v in values if v is not None) or "-"


def median(values):
    v = sorted(x for x in values if x is not None)
    return v[(len(v) - 1) // 2] if v else None


def main(out, gpus):
    def mine(name):
        return ccltune_times(os.path.join(out, "acc%d.%s.json" % (gpus, name)))

    def runs_of(pattern):
        return [nccl_tests_times(f) for f in sorted(glob.glob(os.path.join(out, pattern)))]

    tuned = [ccltune_times(p) for p in sorted(glob.glob(os.path.join(out, "acc%d.[0-9]*.json" % gpus)))]
    long_rounds, graph, one = mine("long"), mine("graph"), mine("one")
    print("\n### Near 1 MiB, %d GPUs, bf16: time per op (us), ccltune's `nccl` choice and "
          "nccl-tests (out of place)\n" % gpus)
    print("| op | size | ccltune (rounds of 20) | rounds of 200 | graph | one buffer set "
          "| nccl-tests -n 20 | -n 200 | graph | P2P/IPC -n 20 | tuned vs -n 20 | tuned vs -n 200 "
          "| one set vs -n 200 | graph vs graph |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for op, prefix in OPS.items():
        n20 = runs_of("acc_%s_%d.n20.[0-9]*.json" % (prefix, gpus))
        n200 = runs_of("acc_%s_%d.n200.[0-9]*.json" % (prefix, gpus))
        ipc = runs_of("acc_%s_%d.ipc.[0-9]*.json" % (prefix, gpus))
        ntg = nccl_tests_times(os.path.join(out, "acc_%s_%d.graph.json" % (prefix, gpus)))
        for size in SIZES:
            def host(runs):
                return [r.get(size) for r in runs]
            t = median([r.get((op, size)) for r in tuned])
            ref_graph = ntg.get(size)
            print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                op, size, fmt([r.get((op, size)) for r in tuned]),
                fmt([long_rounds.get((op, size))]), fmt([graph.get((op, size))]),
                fmt([one.get((op, size))]), fmt(host(n20)), fmt(host(n200)), fmt([ref_graph]),
                fmt(host(ipc)), diff(median(host(n20)), t), diff(median(host(n200)), t),
                diff(median(host(n200)), one.get((op, size))),
                diff(ref_graph, graph.get((op, size)))))


def diff(ref, t):
    """busbw is bytes / time times a constant, so the busbw difference is t_ref / t - 1."""
    return "%+.1f%%" % ((ref / t - 1) * 100) if ref and t else "-"


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))

#!/usr/bin/env python3
"""Tables for docs/results/ from one device run of tune_on_device.sh (files in OUT):
tuning cost, accuracy of ccltune's `nccl` choice against nccl-tests, and NCCL default vs
winner per size for allReduce (graph and eager). Reads ccltune's --json summaries and
nccl-tests' stdout; prints Markdown."""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccl_tests_output  # noqa: E402

OPS = {"allReduce": "all_reduce", "allGather": "all_gather", "reduceScatter": "reduce_scatter"}


def load_summary(out, name):
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def parse_nccl_tests(path):
    """size -> (time_us, busbw) of the out-of-place columns of one nccl-tests output."""
    return {size: (r.out_us, r.out_busbw) for size, r in nccl_tests_output.read(path).items()}


def nccl_tests(out, prefix, op, gpus):
    """size -> (time_us, busbw): one run (PREFIX_OP_N.txt) or, when the run was repeated
    (PREFIX_OP_N.1.txt, .2, ...), the run with the median time per size (nccl-tests'
    eager host launch gaps vary between runs; one value per size stays self-consistent)."""
    base = os.path.join(out, "%s_%s_%d" % (prefix, OPS[op], gpus))
    paths = sorted(glob.glob(base + ".[0-9]*.txt")) or \
        ([base + ".txt"] if os.path.exists(base + ".txt") else [])
    runs = [parse_nccl_tests(p) for p in paths]
    rows = {}
    for size in set().union(*runs) if runs else []:
        vals = sorted(r[size] for r in runs if size in r)
        rows[size] = vals[(len(vals) - 1) // 2]
    return rows


def nccl_tests_runs(out, prefix, op, gpus):
    base = os.path.join(out, "%s_%s_%d" % (prefix, OPS[op], gpus))
    return len(glob.glob(base + ".[0-9]*.txt")) or int(os.path.exists(base + ".txt"))


def choice(rec, name):
    for c in rec["choices"]:
        if c["name"] == name and c["status"] == "ok":
            return c
    return None


def cost_table(summary, name):
    t = summary["timing"]
    print("\n### Tuning cost: %s (%d ranks, %d problems)\n" % (name, summary["worldSize"],
                                                              summary["problems"]))
    print("| phase | seconds |\n|---|---|")
    for key, label in [("commSetupS", "communicator setup + recoveries"),
                       ("presyncS", "pre-sync window"), ("barriersS", "barriers"),
                       ("timedRunsS", "timed rounds"), ("warmupVerifyS", "warm-up, verify, prepare"),
                       ("tuningS", "benchmark loop in all")]:
        print("| %s | %.2f |" % (label, t.get(key, 0)))
    print("\npre-sync wait %.2f ms (max over ranks), skew %.2f ms; barrier median %.1f us" %
          (summary["presync"]["waitMs"], summary["presync"]["skewMs"],
           summary["barrier"]["medianUs"]))


def accuracy_table(summary, out, gpus):
    print("\n### `nccl` choice vs nccl-tests, %d GPUs, bf16, eager (busbw GB/s)\n" % gpus)
    runs = nccl_tests_runs(out, "nt", "allReduce", gpus)
    if runs > 1:
        print("nccl-tests: per size the median of %d runs.\n" % runs)
    print("| op | size | ccltune time (us) | nccl-tests time (us) | ccltune busbw | "
          "nccl-tests busbw | diff |")
    print("|---|---|---|---|---|---|---|")
    worst = {}
    for rec in summary["records"]:
        ref = nccl_tests(out, "nt", rec["op"], gpus).get(rec["bytes"])
        mine = choice(rec, "nccl")
        if not ref or not mine:
            continue
        diff = (mine["busbwGBs"] - ref[1]) / ref[1] * 100 if ref[1] > 0 else 0
        if rec["bytes"] >= 1 << 20:
            worst[rec["op"]] = max(worst.get(rec["op"], 0), abs(diff))
        print("| %s | %d | %.2f | %.2f | %.2f | %.2f | %+.1f%% |" %
              (rec["op"], rec["bytes"], mine["timeUs"], ref[0], mine["busbwGBs"], ref[1], diff))
    for op, w in sorted(worst.items()):
        print("\nworst |diff| at >= 1 MiB, %s: %.1f%%" % (op, w))


def winner_table(graph, eager, out, gpus):
    print("\n### allReduce bf16, %d GPUs: NCCL default vs ccltune winner (us per op)\n" % gpus)
    print("| size | default (graph) | winner (graph) | time | speedup | default (eager) | "
          "winner (eager) | time | speedup | nccl-tests graph |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    ntg = nccl_tests(out, "ntg", "allReduce", gpus)
    by_size = {r["bytes"]: r for r in eager["records"]} if eager else {}
    for g in graph["records"]:
        e = by_size.get(g["bytes"])
        ref = ntg.get(g["bytes"])
        print("| %d | %.2f | %s | %.2f | %.2fx | %s | %s | %s | %s | %s |" % (
            g["bytes"], g["defaultTimeUs"], g["winner"], g["timeUs"], g["speedupVsDefault"],
            "%.2f" % e["defaultTimeUs"] if e else "-", e["winner"] if e else "-",
            "%.2f" % e["timeUs"] if e else "-", "%.2fx" % e["speedupVsDefault"] if e else "-",
            "%.2f" % ref[0] if ref else "-"))


def main(out):
    for name in ("sweep8", "sweep4", "sweep2"):
        s = load_summary(out, name)
        if s:
            cost_table(s, name)
            accuracy_table(s, out, s["worldSize"])
    for gpus in (8, 4):
        graph = load_summary(out, "graph%d" % gpus)
        if graph:
            winner_table(graph, load_summary(out, "eager%d" % gpus), out, gpus)
    hang = load_summary(out, "hang4")
    if hang:
        print("\n### Hanging choice (test-hang), 4 GPUs, choiceTimeoutSeconds 5\n")
        for rec in hang["records"]:
            for c in rec["choices"]:
                print("- %d B %s: %s %s" % (rec["bytes"], c["name"], c["status"],
                                             c.get("reason", "")[:120]))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")

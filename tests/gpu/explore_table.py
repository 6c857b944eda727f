#!/usr/bin/env python3
"""Which peer-kernel grids win where: reads OUTDIR/explore{N}.json (`ccltune tune --json`
over the wide grid of own_kernels_on_device.sh's exploreN, graph mode) and, when present,
OUTDIR/torch{N}.json; prints per size the NCCL default, torch's best graph time, the best
choice, and the best time per value of each kernel parameter (blocks, threads, mode,
unroll), so the catalog keeps the grids that win somewhere.

Run: python3 tests/gpu/explore_table.py OUTDIR [--gpus N]
"""
import argparse
import json
import os


def fmt_bytes(n):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return "%d %s" % (n >> shift, unit)
    return "%d B" % n


def torch_best(path):
    if not os.path.exists(path):
        return {}
    best = {}
    for r in json.load(open(path))["records"]:
        t = r.get("timeUs")
        if r.get("mode") == "graph" and r.get("kernel") in ("one_shot", "two_shot") and t:
            best[r["bytes"]] = min(best.get(r["bytes"], t), t)
    return best


def ok_choices(rec):
    return [c for c in rec["choices"] if c.get("status") == "ok" and c.get("timeUs")]


def table(out, n):
    doc = json.load(open(os.path.join(out, "explore%d.json" % n)))
    torch = torch_best(os.path.join(out, "torch%d.json" % n))
    keys = ("blocks", "threads", "mode", "unroll")
    print("\n### %d GPUs, graph: best time per parameter value (us)\n" % n)
    for rec in sorted(doc["records"], key=lambda r: r["bytes"]):
        cs = ok_choices(rec)
        nccl = next((c["timeUs"] for c in cs if c["name"] == "nccl"), None)
        own = [c for c in cs if c["name"].startswith(("oneshot", "twoshot"))]
        if not own:
            continue
        top = min(own, key=lambda c: c["timeUs"])
        tb = torch.get(rec["bytes"])
        print("%s: nccl %s, torch best %s, best %s %.2f%s" % (
            fmt_bytes(rec["bytes"]), "%.2f" % nccl if nccl else "-", "%.2f" % tb if tb else "-",
            top["name"], top["timeUs"], " (%.3fx torch)" % (top["timeUs"] / tb) if tb else ""))
        for base in ("oneshot", "twoshot"):
            mine = [c for c in own if c["name"].startswith(base)]
            if not mine:
                continue
            parts = []
            for k in keys:
                vals = {}
                for c in mine:
                    v = str(c.get("params", {}).get(k, "1" if k == "unroll" else "?"))
                    vals[v] = min(vals.get(v, 1e30), c["timeUs"])
                parts.append("%s " % k + "/".join("%s:%.2f" % kv for kv in sorted(
                    vals.items(), key=lambda kv: (len(kv[0]), kv[0]))))
            print("    %s  %s" % (base, "  ".join(parts)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--gpus", type=int, action="append")
    a = ap.parse_args()
    for n in a.gpus or [n for n in (2, 4, 8)
                        if os.path.exists(os.path.join(a.out, "explore%d.json" % n))]:
        table(a.out, n)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Issue 34's tables: nccl-tests with every rank in one process (-t N -g 1 and -t 1 -g N),
eager and graph, with and without libccltune-nccl preloaded.

  nccl_onepro_table.py DIR N

Reads DIR/onepro_{plain,shim}_{op}_{threads,gpus}_{eager,graph}.txt (nccl-tests stdout) and
DIR/onepro-walls.txt ("NAME SECONDS EXIT" per run). Prints per run: wall seconds plain and
preloaded and their difference, the #wrong totals, the out-of-place geomean speedup; then,
per layout, all_reduce in graph mode per size with the speedup at <= 256 KiB. Exit 1 when a
bar is missed: a wrong value, a preloaded run more than 1 s slower than its plain run, a run
that failed, or an all_reduce graph size <= 256 KiB below 1.5x.
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_with_nccl_tests import parse_nccl_tests  # noqa: E402
from nccl_shim_table import wrong  # noqa: E402

OPS = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "alltoall")
SHAPES = ("threads", "gpus")
MODES = ("eager", "graph")
SMALL = 256 << 10


def walls(d):
    out = {}
    path = os.path.join(d, "onepro-walls.txt")
    for line in open(path) if os.path.exists(path) else []:
        t = line.split()
        if len(t) == 3:
            out[t[0]] = (float(t[1]), int(t[2]))
    return out


def runs_table(d, w):
    misses = []
    print("| run | plain s | preloaded s | Δ s | wrong plain | wrong preloaded | geomean |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for op in OPS:
        for shape in SHAPES:
            for mode in MODES:
                tag = "%s_%s_%s" % (op, shape, mode)
                p = os.path.join(d, "onepro_plain_%s.txt" % tag)
                s = os.path.join(d, "onepro_shim_%s.txt" % tag)
                if "plain_" + tag not in w or not os.path.exists(s):
                    continue
                (pw, prc), (sw, src) = w["plain_" + tag], w.get("shim_" + tag, (float("nan"), -1))
                wp, ws = wrong(p), wrong(s)
                pt, st = parse_nccl_tests(p), parse_nccl_tests(s)
                sizes = sorted(set(pt) & set(st))
                geo = math.exp(sum(math.log(pt[b][0] / st[b][0]) for b in sizes) / len(sizes)) \
                    if sizes else float("nan")
                print("| %s | %.2f | %.2f | %+.2f | %d | %d | %.2fx |" % (tag, pw, sw, sw - pw, wp, ws, geo))
                if prc != 0 or src != 0 or not sizes:
                    misses.append("%s: exit %d/%d, %d sizes" % (tag, prc, src, len(sizes)))
                if wp or ws:
                    misses.append("%s: wrong values %d/%d" % (tag, wp, ws))
                if sw - pw > 1.0:
                    misses.append("%s: preloaded %.2f s slower" % (tag, sw - pw))
    return misses


def small_table(d, shape):
    p = os.path.join(d, "onepro_plain_all_reduce_%s_graph.txt" % shape)
    s = os.path.join(d, "onepro_shim_all_reduce_%s_graph.txt" % shape)
    if not (os.path.exists(p) and os.path.exists(s)):
        return ["all_reduce %s graph: not run" % shape]
    pt, st = parse_nccl_tests(p), parse_nccl_tests(s)
    print("\n### all_reduce, %s, graph, bf16 (out-of-place µs)\n" % shape)
    print("| bytes | NCCL | preloaded | speedup |\n|---:|---:|---:|---:|")
    misses = []
    for b in sorted(set(pt) & set(st)):
        r = pt[b][0] / st[b][0]
        print("| %d | %.2f | %.2f | %.2fx |" % (b, pt[b][0], st[b][0], r))
        if b <= SMALL and r < 1.5:
            misses.append("all_reduce %s graph %d B: %.2fx < 1.5x" % (shape, b, r))
    return misses


def main():
    d, n = sys.argv[1], sys.argv[2]
    print("## nccl-tests, every rank in one process, %s GPUs, with and without libccltune-nccl\n" % n)
    misses = runs_table(d, walls(d))
    for shape in SHAPES:
        misses += small_table(d, shape)
    print("\nbars: " + ("all met" if not misses else "MISSED: " + "; ".join(misses)))
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())

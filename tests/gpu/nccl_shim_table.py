#!/usr/bin/env python3
"""Issue 26's tables: unmodified nccl-tests with and without libccltune-nccl preloaded.

  nccl_shim_table.py DIR N

Reads DIR/{plain,shim}_{op}_{eager,graph}.txt (nccl-tests stdout) and prints per op and
mode the out-of-place time per size, the speedup, its geomean, the worst slowdown and the
wrong-value counts of `-c 1` (both columns, both runs).
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_with_nccl_tests import parse_nccl_tests  # noqa: E402

OPS = ("all_reduce", "all_gather", "reduce_scatter")


def wrong(path):
    """Sum of the #wrong columns (out-of-place and in-place) of one run; None if unreadable."""
    total = 0
    for line in open(path):
        t = line.split()
        if len(t) >= 13 and t[0].isdigit() and t[1].isdigit():
            for col in (8, 12):
                total += int(t[col]) if t[col].isdigit() else 0
    return total


def table(d, op, mode):
    plain = os.path.join(d, "plain_%s_%s.txt" % (op, mode))
    shim = os.path.join(d, "shim_%s_%s.txt" % (op, mode))
    if not (os.path.exists(plain) and os.path.exists(shim)):
        return None
    p, s = parse_nccl_tests(plain), parse_nccl_tests(shim)
    sizes = sorted(set(p) & set(s))
    if not sizes:
        return None
    print("\n### %s, %s, bf16 (out-of-place µs)\n" % (op, mode))
    print("| bytes | NCCL | preloaded | speedup |\n|---:|---:|---:|---:|")
    ratios = []
    for b in sizes:
        r = p[b][0] / s[b][0] if s[b][0] > 0 else float("nan")
        ratios.append(r)
        print("| %d | %.2f | %.2f | %.2fx |" % (b, p[b][0], s[b][0], r))
    geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print("\ngeomean %.2fx, worst %.2fx, wrong values: NCCL %s, preloaded %s" % (
        geo, min(ratios), wrong(plain), wrong(shim)))
    return geo, min(ratios)


def main():
    d, n = sys.argv[1], sys.argv[2]
    print("## nccl-tests on %s GPUs, with and without libccltune-nccl" % n)
    for mode in ("graph", "eager"):
        for op in OPS:
            table(d, op, mode)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Issue 26's and 43's tables: unmodified nccl-tests with and without libccltune-nccl preloaded.

  nccl_shim_table.py DIR N

Reads DIR/{plain,shim,shimhold0,shimhold1}_{op}_{eager,graph}[_g].txt (nccl-tests stdout;
`_g` is the `-t 1 -g N` layout, none `-t N -g 1`; `shimholdV` is preloaded with
CCLTUNE_HOLD_IN_PLACE=V)
and prints per op, mode and layout the out-of-place and in-place time per size against
plain, their geomeans, the worst ratio and the wrong-value counts of `-c 1`.
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccl_tests_output  # noqa: E402

OPS = ("all_reduce", "all_gather", "reduce_scatter")
VARIANTS = ("shim", "shimhold0", "shimhold1")


def parse(path):
    """size -> (out-of-place µs, in-place µs, wrong values) of one nccl-tests output."""
    return {size: (r.out_us, r.in_us, (r.out_wrong or 0) + (r.in_wrong or 0))
            for size, r in nccl_tests_output.read(path).items() if r.in_us is not None}


def wrong(path):
    """Sum of the #wrong columns (out-of-place and in-place) of one run."""
    return sum(r[2] for r in parse(path).values())


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def table(d, op, mode, layout):
    name = "%s_%s%s.txt" % (op, mode, layout)
    plain_path = os.path.join(d, "plain_" + name)
    runs = [(v, os.path.join(d, "%s_%s" % (v, name))) for v in VARIANTS]
    runs = [(v, parse(p)) for v, p in runs if os.path.exists(p)]
    if not os.path.exists(plain_path) or not runs:
        return
    p = parse(plain_path)
    sizes = sorted(set(p).intersection(*(r for _, r in runs)))
    if not sizes:
        return
    shape = "-t 1 -g N" if layout else "-t N -g 1"
    print("\n### %s, %s, %s, bf16 (µs; ratio = NCCL / preloaded)\n" % (op, mode, shape))
    head = "| bytes | NCCL out | NCCL in |"
    for v, _ in runs:
        head += " %s out | ratio | %s in | ratio |" % (v, v)
    print(head)
    print("|---:" * (3 + 4 * len(runs)) + "|")
    ratios = {v: ([], []) for v, _ in runs}
    for b in sizes:
        line = "| %d | %.2f | %.2f |" % (b, p[b][0], p[b][1])
        for v, r in runs:
            ro, ri = p[b][0] / r[b][0], p[b][1] / r[b][1]
            ratios[v][0].append(ro)
            ratios[v][1].append(ri)
            line += " %.2f | %.2fx | %.2f | %.2fx |" % (r[b][0], ro, r[b][1], ri)
        print(line)
    print("\nwrong values: NCCL %d" % sum(x[2] for x in p.values()))
    for v, r in runs:
        o, i = ratios[v]
        print("%s: geomean out-of-place %.2fx (worst %.2fx), in-place %.2fx (worst %.2fx); "
              "wrong values %d" % (v, geomean(o), min(o), geomean(i), min(i),
                                   sum(x[2] for x in r.values())))


def main():
    d, n = sys.argv[1], sys.argv[2]
    print("## nccl-tests on %s GPUs, with and without libccltune-nccl" % n)
    for mode in ("graph", "eager"):
        for layout in ("", "_g"):
            for op in OPS:
                table(d, op, mode, layout)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""nccl-tests with and without NCCL's profiler plugin (issue 45): the cost of profiling.

  profiler_cost_table.py DIR      DIR holds nt-VARIANT-N.txt: plain, plugin and (optional)
                                  every, N = 1, 2, ...

Per size, the out-of-place time of each run (nccl-tests' "time" column, µs), the median of
each variant's runs, and each variant / plain. Interleaved runs (plain, plugin, every, plain,
...) so that drift on the machine falls on all of them. "plugin" is the plugin as shipped
(kernel channels timed for the sampled calls), "every" the plugin timing every call.
"""
import glob
import statistics
import sys


def times(path):
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 8 and f[0].isdigit():
            out[int(f[0])] = float(f[5])  # size count type redop root time algbw busbw ...
    return out


def main():
    d = sys.argv[1]
    runs = {}
    for v in ("plain", "plugin", "every"):
        paths = sorted(glob.glob("%s/nt-%s-*.txt" % (d, v)))
        if paths:
            runs[v] = [times(p) for p in paths]
    sizes = sorted(set.intersection(*(set(r) for v in runs.values() for r in v)))
    others = [v for v in runs if v != "plain"]
    print("| bytes | plain (µs) | %s |" % " | ".join("%s (µs) | %s / plain" % (v, v) for v in others))
    print("|---|---|" + "---|---|" * len(others))
    ratios = {v: [] for v in others}
    for s in sizes:
        a = statistics.median(r[s] for r in runs["plain"])
        cells = []
        for v in others:
            b = statistics.median(r[s] for r in runs[v])
            ratios[v].append(b / a)
            cells.append("%.2f | %.3f" % (b, b / a))
        print("| %d | %.2f | %s |" % (s, a, " | ".join(cells)))
    for v in others:
        if ratios[v]:
            print("\n%s: worst %.3f, geomean %.3f over %d sizes (runs: %d each)" % (
                v, max(ratios[v]), statistics.geometric_mean(ratios[v]), len(ratios[v]),
                len(runs["plain"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())

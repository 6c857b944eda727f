#!/usr/bin/env python3
"""nccl-tests with and without NCCL's profiler plugin (issue 45): the cost of profiling.

  profiler_cost_table.py DIR      DIR holds nt-plain-{1,2}.txt and nt-plugin-{1,2}.txt

Per size, the out-of-place time of each run (nccl-tests' "time" column, µs), the median of
the two runs of each variant, and plugin / plain. Interleaved runs (plain, plugin, plain,
plugin) so that drift on the machine falls on both.
"""
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
    runs = {v: [times("%s/nt-%s-%d.txt" % (d, v, i)) for i in (1, 2)] for v in ("plain", "plugin")}
    sizes = sorted(set.intersection(*(set(r) for v in runs.values() for r in v)))
    print("| bytes | plain (µs) | with the profiler plugin (µs) | plugin / plain |")
    print("|---|---|---|---|")
    ratios = []
    for s in sizes:
        a = statistics.median(r[s] for r in runs["plain"])
        b = statistics.median(r[s] for r in runs["plugin"])
        ratios.append(b / a)
        print("| %d | %.2f | %.2f | %.3f |" % (s, a, b, b / a))
    if ratios:
        print("\nworst %.3f, geomean %.3f over %d sizes" % (
            max(ratios), statistics.geometric_mean(ratios), len(ratios)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

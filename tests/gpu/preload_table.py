#!/usr/bin/env python3
"""An unmodified dist.all_reduce program with and without libccltune-nccl preloaded (issue 43).

Reads two outputs of torch_symm_bench.py from the same machine and call: PLAIN.json (run as
is) and PRELOADED.json (run with LD_PRELOAD=libccltune-nccl.so and the tune's winners), and
prints per mode and size: dist.all_reduce's time plain and preloaded, their ratio, the best
of PyTorch's own paths (plain NCCL and symmetric memory's one-shot and two-shot, from the plain
run) and the preloaded time against it; then the geomeans and the sizes up to 4 MiB below a
target ratio. Times are us per op, median of rounds, max over ranks (torch_symm_bench.py).
Where the runs recorded it (hostUs), two more columns give the host's time per op to issue the
calls, plain and preloaded: where it is near the time per op, the program is host-bound.

    python3 tests/gpu/preload_table.py PLAIN.json PRELOADED.json [--target 1.5] [--modes graph]

PLAIN and PRELOADED may each name several runs, comma separated (plain and preloaded runs
alternated in one call, as the `symmrep` section makes them): each time is then the median
over the runs, and the table adds how many sizes were slower than plain in each pair of runs,
and per size in how many pairs preloaded was slower, with a one-sided sign test's p.
"""
import statistics
import argparse
import json
import math

PYTORCH_PATHS = ("nccl", "one_shot", "two_shot")


def times(doc, field="timeUs"):
    return {(r["bytes"], r["mode"], r["kernel"]): r[field]
            for r in doc["records"] if r.get("status") == "ok" and r.get(field)}


def load(paths, field="timeUs"):
    """Per key, the median of `field` over the runs that have it; and each run's own values."""
    runs = []
    for path in paths.split(","):
        with open(path) as f:
            runs.append(times(json.load(f), field))
    keys = set().union(*runs)
    return {k: statistics.median(r[k] for r in runs if k in r) for k in keys}, runs


def slower_per_pair(plains, pres, mode):
    """For each (plain, preloaded) pair of runs, the sizes where preloaded was slower."""
    out = []
    for p, s in zip(plains, pres):
        sizes = sorted(b for (b, m, k) in p if m == mode and k == "nccl" and (b, m, k) in s)
        out.append([fmt_bytes(b) for b in sizes if s[(b, mode, "nccl")] > p[(b, mode, "nccl")]])
    return out


def sign_test_p(slower, pairs):
    """One-sided sign test: the chance of at least `slower` of `pairs` pairs coming out
    slower if preloaded and plain were alike (each pair a fair coin)."""
    return sum(math.comb(pairs, k) for k in range(slower, pairs + 1)) / 2.0 ** pairs


def paired(plains, pres, mode):
    """Per size: in how many pairs preloaded was slower, and the sign test's p. Eager runs move
    between processes by more than the medians differ; a size is slower than plain on this
    evidence only where p is small (below 0.05 from 5 of 5, 7 of 8 or 12 of 15 pairs on)."""
    sizes = sorted({b for r in plains for (b, m, k) in r if m == mode and k == "nccl"})
    print("\n| size | pairs slower | sign test p (one-sided) |\n|---|---|---|")
    for b in sizes:
        key = (b, mode, "nccl")
        both = [(p[key], s[key]) for p, s in zip(plains, pres) if key in p and key in s]
        slower = sum(1 for p, s in both if s > p)
        print("| %s | %d of %d | %.3f |" % (fmt_bytes(b), slower, len(both),
                                           sign_test_p(slower, len(both))))


def spread(plains, pres, mode):
    """Each run's own time per size, in run order: how far one process moves from the next."""
    sizes = sorted({b for r in plains + pres for (b, m, k) in r if m == mode and k == "nccl"})
    print("\n| size | plain runs | preloaded runs |\n|---|---|---|")
    for b in sizes:
        cells = [", ".join("%.2f" % r[(b, mode, "nccl")] for r in runs if (b, mode, "nccl") in r)
                 for runs in (plains, pres)]
        print("| %s | %s | %s |" % (fmt_bytes(b), cells[0], cells[1]))


def fmt_bytes(b):
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= div and b % div == 0:
            return "%d %s" % (b // div, unit)
    return "%d B" % b


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def table(plain, pre, mode, target, host=None):
    """host: (plain, preloaded) host times per op (hostUs), printed as two more columns."""
    sizes = sorted({b for (b, m, k) in plain if m == mode and k == "nccl"} &
                   {b for (b, m, k) in pre if m == mode and k == "nccl"})
    host = host if host and any(k[1] == mode for k in host[0]) else None
    print("\n%s mode: dist.all_reduce bf16 sum, us per op\n" % mode)
    print("| size | plain | preloaded | plain / preloaded | best PyTorch path | best / preloaded |"
          + (" host plain | host preloaded |" if host else ""))
    print("|---|---|---|---|---|---|" + ("---|---|" if host else ""))
    gains, over_best, short = [], [], []
    for b in sizes:
        p, s = plain[(b, mode, "nccl")], pre[(b, mode, "nccl")]
        best = min((plain[(b, mode, k)], k) for k in PYTORCH_PATHS if (b, mode, k) in plain)
        gains.append(p / s)
        over_best.append(best[0] / s)
        if b <= 4 << 20 and p / s < target:
            short.append(fmt_bytes(b))
        extra = ""
        if host:
            extra = "".join(" %s |" % ("%.2f" % h[(b, mode, "nccl")] if (b, mode, "nccl") in h
                                       else "-") for h in host)
        print("| %s | %.2f | %.2f | %.2fx | %.2f (%s) | %.2fx |%s" %
              (fmt_bytes(b), p, s, p / s, best[0], best[1], best[0] / s, extra))
    print("\ngeomean over %d sizes: %.2fx against plain, %.2fx against the best PyTorch path"
          % (len(sizes), geomean(gains), geomean(over_best)))
    print("sizes up to 4 MiB below %.2fx: %s" % (target, ", ".join(short) or "none"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("plain")
    ap.add_argument("preloaded")
    ap.add_argument("--target", type=float, default=1.5)
    ap.add_argument("--modes", default="graph,eager", help="which modes to print")
    a = ap.parse_args()
    plain, plains = load(a.plain)
    pre, pres = load(a.preloaded)
    host = (load(a.plain, "hostUs")[0], load(a.preloaded, "hostUs")[0])
    for mode in a.modes.split(","):
        if len(plains) > 1:
            print("\n%d plain and %d preloaded runs, alternated: medians"
                  % (len(plains), len(pres)))
        table(plain, pre, mode, a.target, host)
        if len(plains) > 1:
            for i, sizes in enumerate(slower_per_pair(plains, pres, mode)):
                print("pair %d: preloaded slower than plain at %s"
                      % (i + 1, ", ".join(sizes) or "none"))
            paired(plains, pres, mode)
            spread(plains, pres, mode)


if __name__ == "__main__":
    main()

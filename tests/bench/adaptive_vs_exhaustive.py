#!/usr/bin/env python3
"""Adaptive against exhaustive search, side by side in one invocation (issue 25).

Runs `ccltune tune --ranks N --backend host --search exhaustive|adaptive` on the same
problems and prints, per plan: problems, how often both searches picked the same winner,
where they differ how much slower the adaptive winner was in the exhaustive run (the noise
threshold is the bar) and whether the exhaustive winner was pruned by the adaptive run or
measured there in full and lost, the same agreement between two exhaustive runs (the
measurement's own noise), and each search's tuning time, CPU time and their ratios; then
cost growth: tuning time against the number of problems (x1, x2, x4), also as an SVG.

The build machine is shared, and load from elsewhere comes in bursts of minutes. So each
plan runs as one job per group (op, dtype: the unit the adaptive search learns in; the
union is the plan) with the two searches back to back, alternating which goes first; a
plan's time is the sum over its groups ("tuningS" of each job's summary: the measuring
itself, without process start and rendezvous). CPU time (user + system of every rank,
from rusage) is the work done, which other load inflates much less than wall time.

Plans: `default` (the default host plan: allReduce, allGather, reduceScatter x fp32 x
1 KiB-4 MiB x4, 21 problems), `large` (the same ops x fp32, bf16 x 1 KiB-16 MiB x2,
90 problems, choiceTimeoutSeconds 60), growth `xN` (the default plan's ops with N x 7 sizes
spread evenly in log between 1 KiB and 4 MiB: 21, 42, 84 problems; x1 is `default`).

  python3 tests/bench/adaptive_vs_exhaustive.py --ccltune build/worker/ccltune \
      --repeats 2 --sets default,large,growth --out tests/bench/results
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

NOISE_PERCENT = 3.0  # noiseThresholdPercent of the plans (the default)
OPS = ("allReduce", "allGather", "reduceScatter")


def spread_sizes(n):
    """n sizes from 1 KiB to 4 MiB, evenly in log, multiples of 64 bytes."""
    lo, hi = 1 << 10, 4 << 20
    return ",".join(str(int(round(lo * (hi / lo) ** (i / (n - 1)) / 64)) * 64) for i in range(n))


def plan_groups(name):
    """(label, extra flags) per group of a plan."""
    if name == "default":
        return [(op + " fp32", ["--op", op, "--dtypes", "fp32", "--sizes", "1KiB:4MiB:4"])
                for op in OPS]
    if name == "large":
        return [("%s %s" % (op, d), ["--op", op, "--dtypes", d, "--sizes", "1KiB:16MiB:2",
                                     "--choice-timeout", "60"])
                for op in OPS for d in ("fp32", "bf16")]
    n = int(name[1:])
    return [(op + " fp32", ["--op", op, "--dtypes", "fp32", "--sizes", spread_sizes(7 * n)])
            for op in OPS]


def run_tune(ccltune, ranks, search, extra, workdir):
    """One `ccltune tune`; its summary JSON plus the CPU seconds of it and its ranks."""
    out = os.path.join(workdir, "summary-%d.json" % time.monotonic_ns())
    cmd = [ccltune, "tune", "--ranks", str(ranks), "--backend", "host", "--search", search,
           "--no-publish", "--cache-dir", os.path.join(workdir, "cache"), "--json", out] + extra
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stdout[-4000:]))
    with open(out) as f:
        summary = json.load(f)
    summary["cpuS"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return summary


def records(summary):
    return {key(r): r for r in summary["records"]}


def key(r):
    k = "%s:%s:%s:%d" % (r["op"], r["dtype"], r["redop"], r["bytes"])
    e = r.get("epilogue")
    return k + (":%s:hidden=%d" % (e["kind"], e["hidden"]) if e else "")


def choice(record, name):
    for c in record["choices"]:
        if c["name"] == name:
            return c
    return None


def compare(exhaustive, adaptive):
    """Winners of one exhaustive and one adaptive run of the same plan."""
    e, a = records(exhaustive), records(adaptive)
    out = {"problems": len(e), "same": 0, "differ": []}
    for k, re in e.items():
        ra = a[k]
        if re["winner"] == ra["winner"]:
            out["same"] += 1
            continue
        # How much slower the adaptive winner was than the exhaustive one, both timed in the
        # exhaustive run (which measured every choice in full).
        t_e = re["timeUs"]
        t_a = choice(re, ra["winner"])["timeUs"]
        lost = choice(ra, re["winner"])
        out["differ"].append({
            "problem": k, "exhaustive": re["winner"], "adaptive": ra["winner"],
            "slowerPercent": (t_a / t_e - 1) * 100 if t_a and t_e else None,
            "exhaustiveWinnerInAdaptiveRun": lost["status"] if lost else "absent"})
    return out


def same_winners(x, y):
    rx, ry = records(x), records(y)
    return sum(rx[k]["winner"] == ry[k]["winner"] for k in rx)


def run_set(args, name, workdir):
    """Every group of the plan, both searches back to back; returns per search the list
    (one per repeat) of the groups' summaries."""
    runs = {"exhaustive": [], "adaptive": []}
    groups = plan_groups(name)
    for i in range(args.repeats):
        rep = {"exhaustive": [], "adaptive": []}
        for g, (label, extra) in enumerate(groups):
            order = ("exhaustive", "adaptive") if (i + g) % 2 == 0 else ("adaptive", "exhaustive")
            for search in order:
                s = run_tune(args.ccltune, args.ranks, search, extra, workdir)
                rep[search].append(s)
                print("  %-6s %-22s %-10s %6.1f s tuning, %6.1f s CPU, %s" % (
                    name, label, search, s["timing"]["tuningS"], s["cpuS"],
                    s.get("screening", {})), flush=True)
        for search in rep:
            runs[search].append(rep[search])
    return runs


def merged(groups):
    """One repeat's group summaries as one: records joined, times summed."""
    out = {"records": [], "timing": {}, "screening": {"screened": 0, "pruned": 0}, "cpuS": 0}
    for s in groups:
        out["records"] += s["records"]
        for k, v in s["timing"].items():
            out["timing"][k] = out["timing"].get(k, 0) + v
        for k in ("screened", "pruned"):
            out["screening"][k] += s.get("screening", {}).get(k, 0)
        out["cpuS"] += s["cpuS"]
    return out


def floor_share(summary):
    """The least an adaptive search under this rule can measure, as a share of the exhaustive
    run's op time: the default and every choice within the noise threshold of the fastest
    must run in full (weights: each choice's median op time, in this exhaustive run)."""
    must, total = 0.0, 0.0
    for r in summary["records"]:
        ok = [c for c in r["choices"] if c["status"] == "ok" and c["timeUs"]]
        if not ok:
            continue
        fastest = min(c["timeUs"] for c in ok)
        for c in ok:
            total += c["timeUs"]
            if c["name"] == "ring" or c["timeUs"] <= fastest * (1 + NOISE_PERCENT / 100):
                must += c["timeUs"]
    return must / total if total else float("nan")


def summarize(name, runs):
    e = [merged(r) for r in runs["exhaustive"]]
    a = [merged(r) for r in runs["adaptive"]]
    pairs = [compare(x, y) for x, y in zip(e, a)]
    row = {
        "set": name,
        "problems": pairs[0]["problems"],
        "runs": len(e),
        "samePercent": [100.0 * p["same"] / p["problems"] for p in pairs],
        "differ": [d for p in pairs for d in p["differ"]],
        "exhaustiveS": [s["timing"]["tuningS"] for s in e],
        "adaptiveS": [s["timing"]["tuningS"] for s in a],
        "exhaustiveCpuS": [s["cpuS"] for s in e],
        "adaptiveCpuS": [s["cpuS"] for s in a],
        "screeningS": [s["timing"].get("screeningS", 0) for s in a],
        "fullS": [s["timing"].get("fullS", 0) for s in a],
        "screened": [s["screening"]["screened"] for s in a],
        "pruned": [s["screening"]["pruned"] for s in a],
        "timing": {"exhaustive": [s["timing"] for s in e], "adaptive": [s["timing"] for s in a]},
    }
    if len(e) >= 2:
        row["exhaustiveSelfPercent"] = [
            100.0 * same_winners(e[i], e[i + 1]) / row["problems"] for i in range(len(e) - 1)]
    row["floor"] = [floor_share(x) for x in e]
    row["ratio"] = [y / x for x, y in zip(row["exhaustiveS"], row["adaptiveS"])]
    row["cpuRatio"] = [y / x for x, y in zip(row["exhaustiveCpuS"], row["adaptiveCpuS"])]
    return row


def fmt_list(values, f="%.1f"):
    return ", ".join(f % v for v in values)


def median(values):
    return statistics.median(values) if values else float("nan")


def markdown(rows, growth):
    lines = [
        "| plan | problems | repeats | same winner | where different: adaptive winner slower, "
        "in the exhaustive run | exhaustive winner in the adaptive run | same winner, two "
        "exhaustive runs | tuning s, exhaustive | tuning s, adaptive | adaptive / exhaustive "
        "(tuning) | CPU s, exhaustive / adaptive | adaptive / exhaustive (CPU) | least "
        "possible share (op time that must run in full) | adaptive: screening / full s, "
        "choices screened / pruned |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        d = [x["slowerPercent"] for x in r["differ"] if x["slowerPercent"] is not None]
        within = sum(1 for x in d if x <= NOISE_PERCENT)
        causes = {}
        for x in r["differ"]:
            c = x["exhaustiveWinnerInAdaptiveRun"]
            causes[c] = causes.get(c, 0) + 1
        lines.append("| %s | %d | %d | %s %% | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["set"], r["problems"], r["runs"], fmt_list(r["samePercent"]),
            ("%d of %d within %.0f %%, median %.1f %%, max %.1f %%" % (
                within, len(d), NOISE_PERCENT, median(d), max(d))) if d else "-",
            ", ".join("%s %d" % kv for kv in sorted(causes.items())) or "-",
            (fmt_list(r["exhaustiveSelfPercent"]) + " %") if "exhaustiveSelfPercent" in r else "-",
            fmt_list(r["exhaustiveS"]), fmt_list(r["adaptiveS"]), fmt_list(r["ratio"], "%.2f"),
            "; ".join("%.0f / %.0f" % t for t in zip(r["exhaustiveCpuS"], r["adaptiveCpuS"])),
            fmt_list(r["cpuRatio"], "%.2f"), fmt_list(r["floor"], "%.2f"),
            "; ".join("%.1f / %.1f, %d / %d" % t for t in zip(
                r["screeningS"], r["fullS"], r["screened"], r["pruned"]))))
    if growth:
        lines += ["", "| problems | tuning s, exhaustive | tuning s, adaptive | adaptive / "
                  "exhaustive | CPU s, exhaustive / adaptive | adaptive / exhaustive (CPU) |",
                  "|---|---|---|---|---|---|"]
        for g in growth:
            lines.append("| %d | %s | %s | %s | %s | %s |" % (
                g["problems"], fmt_list(g["exhaustiveS"]), fmt_list(g["adaptiveS"]),
                fmt_list(g["ratio"], "%.2f"),
                "; ".join("%.0f / %.0f" % t for t in zip(g["exhaustiveCpuS"], g["adaptiveCpuS"])),
                fmt_list(g["cpuRatio"], "%.2f")))
    return "\n".join(lines) + "\n"


def growth_svg(growth, path):
    """Tuning time (median of the runs) against problems, one line per search."""
    w, h, ml, mr, mt, mb = 560, 340, 70, 150, 30, 50
    xs = [g["problems"] for g in growth]
    ys = {s: [statistics.median(g[s + "S"]) for g in growth] for s in ("exhaustive", "adaptive")}
    xmax = max(xs) * 1.1
    ymax = max(max(v) for v in ys.values()) * 1.15

    def px(x):
        return ml + (w - ml - mr) * x / xmax

    def py(y):
        return h - mb - (h - mt - mb) * y / ymax

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (w, h),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="18" font-size="14">Tuning time vs problems (host backend, 4 ranks, '
           'median of runs)</text>' % ml,
           '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (ml, h - mb, w - mr, h - mb),
           '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (ml, mt, ml, h - mb)]
    for x in xs:
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (px(x), h - mb + 16, x))
    step = max(1, int(ymax / 5 / 10 + 1) * 10) if ymax > 20 else 5
    y = 0
    while y <= ymax:
        out.append('<text x="%d" y="%.1f" text-anchor="end">%d</text>' % (ml - 6, py(y) + 4, y))
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (
            ml, py(y), w - mr, py(y)))
        y += step
    out.append('<text x="%d" y="%d" text-anchor="middle">problems</text>' % (
        (ml + w - mr) // 2, h - 12))
    out.append('<text x="16" y="%d" transform="rotate(-90 16 %d)" text-anchor="middle">'
               'tuning time (s)</text>' % ((mt + h - mb) // 2, (mt + h - mb) // 2))
    for i, (s, color) in enumerate((("exhaustive", "#d62728"), ("adaptive", "#1f77b4"))):
        pts = " ".join("%.1f,%.1f" % (px(x), py(y)) for x, y in zip(xs, ys[s]))
        out.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>' % (pts, color))
        for x, y in zip(xs, ys[s]):
            out.append('<circle cx="%.1f" cy="%.1f" r="4" fill="%s"/>' % (px(x), py(y), color))
        ly = mt + 20 + 20 * i
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>' % (
            w - mr + 12, ly, w - mr + 36, ly, color))
        out.append('<text x="%d" y="%d">%s</text>' % (w - mr + 42, ly + 4, s))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ccltune", default="build/worker/ccltune")
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--sets", default="default,large,growth")
    p.add_argument("--out", default="", help="write adaptive-vs-exhaustive.{md,json} and the SVG")
    args = p.parse_args()
    args.ccltune = os.path.abspath(args.ccltune)
    sets = args.sets.split(",")
    todo = ((["default"] if "default" in sets or "growth" in sets else []) +
            (["large"] if "large" in sets else []) + (["x2", "x4"] if "growth" in sets else []))
    rows, growth = [], []
    with tempfile.TemporaryDirectory(prefix="ccltune-adaptive-") as workdir:
        for name in todo:
            row = summarize(name, run_set(args, name, workdir))
            if name in ("default", "large") and name in sets:
                rows.append(row)
            if name in ("default", "x2", "x4") and "growth" in sets:
                growth.append(row)
    text = markdown(rows, growth)
    print()
    print(text)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "adaptive-vs-exhaustive.md"), "w") as f:
            f.write(text)
        with open(os.path.join(args.out, "adaptive-vs-exhaustive.json"), "w") as f:
            json.dump({"rows": rows, "growth": growth}, f, indent=1)
        if growth:
            growth_svg(growth, os.path.join(args.out, "adaptive-growth.svg"))


if __name__ == "__main__":
    main()

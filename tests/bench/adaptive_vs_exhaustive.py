#!/usr/bin/env python3
"""Adaptive against exhaustive search, side by side in one invocation (issue 25).

Runs `ccltune tune --ranks N --backend host --search exhaustive|adaptive` on the same plans,
alternating the two searches (E A, then A E, ...) so that load changes on the machine hit
both alike, and prints:

  * per plan: problems, how often both searches picked the same winner, where they differ
    how much slower the adaptive winner was in the exhaustive run of the same round (the
    noise threshold is the bar), whether the exhaustive winner was pruned or measured and
    lost, the same agreement between two exhaustive runs (the measurement's own noise, when
    --repeats >= 2), and tuning time of each search and their ratio;
  * cost growth: tuning time against the number of problems (x1, x2, x4) for both searches,
    also drawn as an SVG (--out DIR/adaptive-growth.svg).

Sets: `default` (the default host plan: 3 ops x fp32 x 1 KiB-4 MiB x4, 21 problems),
`large` (3 ops x fp32, bf16 x 1 KiB-16 MiB x2, 90 problems, the default plan's benchmark
settings), `growth` (the default plan with 1, 2 and 4 dtypes: 21, 42, 84 problems; x1 is the
`default` set's runs when both are asked for).

  python3 tests/bench/adaptive_vs_exhaustive.py --ccltune build/worker/ccltune \
      --repeats 2 --sets default,large,growth --out tests/bench/results
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

NOISE_PERCENT = 3.0  # the plans' noiseThresholdPercent (the default)

LARGE_PLAN = """collectives:
- {op: allReduce, dtypes: [fp32, bf16], reduceOp: sum, sizes: {min: 1KiB, max: 16MiB, factor: 2}}
- {op: allGather, dtypes: [fp32, bf16], sizes: {min: 1KiB, max: 16MiB, factor: 2}}
- {op: reduceScatter, dtypes: [fp32, bf16], reduceOp: sum, sizes: {min: 1KiB, max: 16MiB, factor: 2}}
benchmark: {warmupIters: 3, iters: 10, rounds: 5, choiceTimeoutSeconds: 60}
"""

GROWTH_DTYPES = {1: "fp32", 2: "fp32,bf16", 4: "fp32,bf16,fp16,int32"}


def run_tune(ccltune, ranks, search, extra, workdir):
    """One `ccltune tune`; returns its summary JSON plus the wall time."""
    out = os.path.join(workdir, "summary-%d.json" % time.monotonic_ns())
    cmd = [ccltune, "tune", "--ranks", str(ranks), "--backend", "host", "--search", search,
           "--no-publish", "--cache-dir", os.path.join(workdir, "cache"), "--json", out] + extra
    t0 = time.monotonic()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.monotonic() - t0
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stdout[-4000:]))
    with open(out) as f:
        summary = json.load(f)
    summary["wallS"] = wall
    print("  %-10s %6.1f s tuning, %6.1f s wall, %s" % (
        search, summary["timing"]["tuningS"], wall,
        summary.get("screening", {})), flush=True)
    return summary


def records(summary):
    return {key(r): r for r in summary["records"]}


def key(r):
    return "%s:%s:%s:%d" % (r["op"], r["dtype"], r["redop"], r["bytes"])


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


def run_set(args, name, extra, workdir):
    print("%s: %s" % (name, " ".join(extra) or "(default host plan)"), flush=True)
    runs = {"exhaustive": [], "adaptive": []}
    for i in range(args.repeats):
        order = ("exhaustive", "adaptive") if i % 2 == 0 else ("adaptive", "exhaustive")
        for search in order:
            runs[search].append(run_tune(args.ccltune, args.ranks, search, extra, workdir))
    return runs


def summarize(name, runs):
    e, a = runs["exhaustive"], runs["adaptive"]
    pairs = [compare(x, y) for x, y in zip(e, a)]
    row = {
        "set": name,
        "problems": pairs[0]["problems"],
        "runs": len(e),
        "samePercent": [100.0 * p["same"] / p["problems"] for p in pairs],
        "differ": [d for p in pairs for d in p["differ"]],
        "exhaustiveS": [s["timing"]["tuningS"] for s in e],
        "adaptiveS": [s["timing"]["tuningS"] for s in a],
        "screeningS": [s["timing"].get("screeningS", 0) for s in a],
        "fullS": [s["timing"].get("fullS", 0) for s in a],
        "screened": [s.get("screening", {}).get("screened", 0) for s in a],
        "pruned": [s.get("screening", {}).get("pruned", 0) for s in a],
    }
    if len(e) >= 2:
        row["exhaustiveSelfPercent"] = [
            100.0 * same_winners(e[i], e[i + 1]) / row["problems"] for i in range(len(e) - 1)]
    row["ratio"] = [y / x for x, y in zip(row["exhaustiveS"], row["adaptiveS"])]
    return row


def fmt_list(values, f="%.1f"):
    return ", ".join(f % v for v in values)


def markdown(rows, growth):
    lines = [
        "| plan | problems | runs | same winner | where different: adaptive winner slower by "
        "(exhaustive run's times) | exhaustive winner in the adaptive run | same winner, "
        "exhaustive vs exhaustive | exhaustive (s) | adaptive (s) | adaptive / exhaustive | "
        "adaptive: screening / full (s), screened / pruned |",
        "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        d = [x["slowerPercent"] for x in r["differ"] if x["slowerPercent"] is not None]
        within = sum(1 for x in d if x <= NOISE_PERCENT)
        causes = {}
        for x in r["differ"]:
            causes[x["exhaustiveWinnerInAdaptiveRun"]] = causes.get(
                x["exhaustiveWinnerInAdaptiveRun"], 0) + 1
        lines.append("| %s | %d | %d | %s %% | %s | %s | %s | %s | %s | %s | %s |" % (
            r["set"], r["problems"], r["runs"], fmt_list(r["samePercent"]),
            ("max %.1f %%, %d of %d within %.0f %%" % (max(d), within, len(d), NOISE_PERCENT))
            if d else "-",
            ", ".join("%s %d" % kv for kv in sorted(causes.items())) or "-",
            (fmt_list(r["exhaustiveSelfPercent"]) + " %") if "exhaustiveSelfPercent" in r else "-",
            fmt_list(r["exhaustiveS"]), fmt_list(r["adaptiveS"]),
            fmt_list(r["ratio"], "%.2f"),
            "; ".join("%.1f / %.1f, %d / %d" % t for t in zip(
                r["screeningS"], r["fullS"], r["screened"], r["pruned"]))))
    if growth:
        lines += ["", "| problems | exhaustive (s) | adaptive (s) | adaptive / exhaustive |",
                  "|---|---|---|---|"]
        for g in growth:
            lines.append("| %d | %s | %s | %s |" % (
                g["problems"], fmt_list(g["exhaustiveS"]), fmt_list(g["adaptiveS"]),
                fmt_list(g["ratio"], "%.2f")))
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
    rows, growth, raw = [], [], {}
    with tempfile.TemporaryDirectory(prefix="ccltune-adaptive-") as workdir:
        plan = os.path.join(workdir, "large.yaml")
        with open(plan, "w") as f:
            f.write(LARGE_PLAN)
        todo = []
        if "default" in sets or "growth" in sets:
            todo.append(("default", []))
        if "large" in sets:
            todo.append(("large", ["--plan", plan]))
        if "growth" in sets:
            todo += [("x%d" % n, ["--dtypes", GROWTH_DTYPES[n]]) for n in (2, 4)]
        for name, extra in todo:
            raw[name] = run_set(args, name, extra, workdir)
            row = summarize(name, raw[name])
            if name in ("default", "large"):
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

#!/usr/bin/env python3
"""ccltune's allReduce winners against PyTorch's symmetric-memory kernels, as Markdown.

Reads, for each N, OUTDIR/graph{N}.json and OUTDIR/eager{N}.json (`ccltune tune --json`
summaries, bf16 sum allReduce) and OUTDIR/torch{N}.json (tests/gpu/torch_symm_bench.py).
Per mode, one table with a row per size: NCCL default (ccltune's `nccl` choice), ccltune's
winner, its best own kernel (oneshot/twoshot), torch one-shot, two-shot and NCCL, the ratio
winner / min(torch one-shot, two-shot) and the winner's speedup over the NCCL default; below
it the geometric-mean speedup, and for graph mode the bars: winner <= 0.9x torch's best at
every size <= 1 MiB, <= 1.0x at every size up to 64 MiB, geomean speedup >= 1.6x.
Rows and bars cover ccltune's sizes (torch's when ccltune's file is missing); missing files,
sizes and kernels show as "-" and are noted.

Run: python3 tests/gpu/own_kernels_table.py OUTDIR [--gpus N]
(default: every N for which OUTDIR/graph{N}.json exists)
"""
import argparse
import glob
import json
import math
import os
import re
import sys

OWN = ("oneshot", "twoshot")
BARS = [("winner <= 0.9x torch best at every size <= 1 MiB", 1 << 20, 0.9),
        ("winner <= 1.0x torch best at every size <= 64 MiB", 64 << 20, 1.0)]
GEOMEAN_BAR = 1.6


def load(path, notes):
    if not os.path.exists(path):
        notes.append("%s: missing" % path)
        return None
    try:
        with open(path) as f:
            doc = json.load(f)
        if not isinstance(doc.get("records"), list):
            raise ValueError("no records list")
        return doc
    except (OSError, ValueError, AttributeError) as e:
        notes.append("%s: unreadable (%s)" % (path, e))
        return None


def num(x):
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0 \
        and math.isfinite(x) else None


def fmt_bytes(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return "%d %s" % (n >> shift, unit)
    return "%d B" % n


def fmt(x, spec="%.2f"):
    return "-" if x is None else spec % x


def label(name, params):
    if not name:
        return "-"
    if not params or ":" in name:  # ccltune's summaries already spell the params out
        return name
    return name + ":" + ",".join("%s=%s" % (k, params[k]) for k in sorted(params))


def ccltune_rows(doc):
    """bytes -> dict(default, winner, wtime, own, otime) from a ccltune summary."""
    rows = {}
    for r in (doc or {}).get("records", []):
        if r.get("op", "allReduce") != "allReduce" or r.get("dtype", "bf16") != "bf16" \
                or r.get("redop", "sum") != "sum" or not isinstance(r.get("bytes"), int):
            continue
        ok = [c for c in r.get("choices") or [] if c.get("status") == "ok" and num(c.get("timeUs"))]
        nccl = [c["timeUs"] for c in ok if c.get("name") == "nccl" and not c.get("params")]
        own = min((c for c in ok if c.get("name", "").split(":")[0] in OWN),
                  key=lambda c: c["timeUs"], default=None)
        rows[r["bytes"]] = {
            "default": nccl[0] if nccl else num(r.get("defaultTimeUs")),
            "winner": label(r.get("winner"), r.get("winnerParams")),
            "wtime": num(r.get("timeUs")) if r.get("winner") else None,
            "own": label(own["name"], own.get("params")) if own else "-",
            "otime": own["timeUs"] if own else None}
    return rows


def torch_rows(doc, mode):
    """bytes -> {kernel: time or None} for one mode; skipped/wrong kernels are None."""
    rows = {}
    for r in (doc or {}).get("records", []):
        if r.get("mode") == mode and isinstance(r.get("bytes"), int):
            ok = r.get("status") == "ok"
            rows.setdefault(r["bytes"], {})[r.get("kernel")] = num(r.get("timeUs")) if ok else None
    return rows


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def table(gpus, mode, mine, theirs, notes):
    print("\n### allReduce bf16 sum, %d GPUs, %s mode: ccltune vs torch symmetric memory "
          "(us per op)\n" % (gpus, mode))
    print("| size | NCCL default | ccltune winner | time | best own kernel | time | "
          "torch one-shot | torch two-shot | torch NCCL | winner / torch best | "
          "speedup vs NCCL default |")
    print("|" + "---|" * 11)
    # Rows (and bars) are ccltune's sizes; torch's alone only when ccltune's file is missing.
    rows = sorted(mine or theirs)
    extra = sorted(set(theirs) - set(rows))
    if extra:
        notes.append("%d GPUs %s: torch sizes ccltune did not tune, not shown: %s"
                     % (gpus, mode, ", ".join(map(fmt_bytes, extra))))
    ratios, speedups, missing = {}, {}, []
    for b in rows:
        m, t = mine.get(b, {}), theirs.get(b, {})
        best = min((x for x in (t.get("one_shot"), t.get("two_shot")) if x), default=None)
        w = m.get("wtime")
        ratio = w / best if w and best else None
        speedup = m["default"] / w if w and m.get("default") else None
        if ratio:
            ratios[b] = ratio
        if speedup:
            speedups[b] = speedup
        if not ratio or not speedup:
            missing.append(fmt_bytes(b))
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            fmt_bytes(b), fmt(m.get("default")), m.get("winner", "-"), fmt(w), m.get("own", "-"),
            fmt(m.get("otime")), fmt(t.get("one_shot")), fmt(t.get("two_shot")),
            fmt(t.get("nccl")), fmt(ratio, "%.2fx"), fmt(speedup, "%.2fx")))
    if not mine or not theirs:
        notes.append("%d GPUs %s: no %s data" % (gpus, mode, "ccltune" if not mine else "torch"))
    elif missing:
        notes.append("%d GPUs %s: no ratio or speedup at %s (file, size or kernel missing, "
                     "skipped or wrong)" % (gpus, mode, ", ".join(missing)))
    g = geomean(list(speedups.values()))
    print("\ngeometric-mean speedup of the winner over the NCCL default: %s over %d sizes"
          % (fmt(g, "%.2fx"), len(speedups)))
    if mode == "graph":
        print()
        for text, limit, bar in BARS:
            sizes = [b for b in rows if b <= limit]
            have = {b: ratios[b] for b in sizes if b in ratios}
            lack = [fmt_bytes(b) for b in sizes if b not in ratios]
            worst = max(have, key=have.get) if have else None
            ok = bool(have) and not lack and have[worst] <= bar
            print("- %s: **%s**%s%s" % (
                text, "PASS" if ok else "FAIL",
                "; worst %.2fx at %s" % (have[worst], fmt_bytes(worst)) if have else "",
                "; no data at %s" % ", ".join(lack) if lack else (
                    "; no sizes" if not sizes else "")))
        worst = min(speedups, key=speedups.get) if speedups else None
        print("- geomean speedup >= %.1fx: **%s**%s" % (
            GEOMEAN_BAR, "PASS" if g and g >= GEOMEAN_BAR else "FAIL",
            "; %.2fx, worst size %s at %.2fx" % (g, fmt_bytes(worst), speedups[worst])
            if worst else "; no data"))


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("outdir", help="directory with graph{N}.json, eager{N}.json, torch{N}.json")
    p.add_argument("--gpus", type=int, action="append",
                   help="GPU count (repeatable; default: every N with graph{N}.json)")
    a = p.parse_args(argv)
    if not os.path.isdir(a.outdir):
        p.error("%s is not a directory" % a.outdir)
    gpus = a.gpus or sorted(int(m.group(1)) for m in (
        re.fullmatch(r"graph(\d+)\.json", os.path.basename(f))
        for f in glob.glob(os.path.join(a.outdir, "graph*.json"))) if m)
    if not gpus:
        print("own_kernels_table: no graph{N}.json in %s (pass --gpus N)" % a.outdir,
              file=sys.stderr)
        return 1
    for n in gpus:
        notes = []
        docs = {k: load(os.path.join(a.outdir, "%s%d.json" % (k, n)), notes)
                for k in ("graph", "eager", "torch")}
        for k, d in docs.items():
            if d and d.get("worldSize") not in (None, n):
                notes.append("%s%d.json says worldSize %s" % (k, n, d.get("worldSize")))
        if docs["torch"] and docs["torch"].get("complete") is False:
            notes.append("torch%d.json is incomplete (the run stopped early)" % n)
        for mode in ("graph", "eager"):
            table(n, mode, ccltune_rows(docs[mode]), torch_rows(docs["torch"], mode), notes)
        if docs["torch"]:
            t = docs["torch"]
            notes.append("torch %s on %s" % (t.get("torchVersion", "?"), t.get("gpu", "?")))
        if notes:
            print("\nNotes (%d GPUs):\n" % n)
            for s in notes:
                print("- " + s)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

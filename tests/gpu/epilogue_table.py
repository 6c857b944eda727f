#!/usr/bin/env python3
"""Issue 16's table: all-reduce + residual add + RMSNorm, fused against unfused.

Reads OUTDIR/eager.json and OUTDIR/graph.json (`ccltune tune --json` summaries of
tests/gpu/plans/epilogue-decode.yaml). Per mode, a row per (hidden, tokens): NCCL +
separate kernel (the `nccl` choice, the default), the best unfused choice, the best fused
kernel, ccltune's winner, and the ratios the issue's bars read (PyTorch's unfused path is
tests/gpu/epilogue_bench.py's table, through the runtime):
  - fused winner >= 1.4x faster than unfused NCCL at tokens <= 128;
  - the winner never slower than the best unfused choice at any shape (beyond the noise
    threshold, 3 %: the winner rule keeps `nccl` unless another choice beats it by more).
Missing files and choices show as "-".

Run: python3 tests/gpu/epilogue_table.py OUTDIR
"""
import json
import math
import os
import sys

FUSED = ("oneshot-fused", "twoshot-fused")
SPEEDUP_BAR, SPEEDUP_TOKENS = 1.4, 128
NOISE_PERCENT = 3  # the winner rule's threshold: beaten means below (1 - 3/100) x its time


def load(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def base(name):
    return name.split(":", 1)[0]


def ok_times(record):
    out = {}
    for c in record.get("choices", []):
        if c.get("status") == "ok" and isinstance(c.get("timeUs"), (int, float)):
            out[c["name"]] = float(c["timeUs"])
    return out


def best(times, pick):
    cand = [(t, n) for n, t in times.items() if pick(n)]
    return min(cand) if cand else (math.inf, "-")


def fmt(v):
    return "-" if v is None or not math.isfinite(v) else "%.2f" % v


def table(mode, doc, out):
    recs = [r for r in doc.get("records", []) if r.get("epilogue")]
    recs.sort(key=lambda r: (r["dtype"], r["epilogue"]["hidden"], r["bytes"]))
    out.append("\n## %s (us per op, max over ranks, median of rounds)\n" % mode)
    out.append("| dtype | hidden | tokens | NCCL + kernel | best unfused | best fused | winner | "
               "NCCL/fused | best unfused/winner |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    fails = []
    for r in recs:
        hidden = r["epilogue"]["hidden"]
        esize = {"bf16": 2, "fp16": 2, "fp32": 4}[r["dtype"]]
        tokens = r["bytes"] // (hidden * esize)
        t = ok_times(r)
        nccl = t.get("nccl", math.inf)
        unf, unf_name = best(t, lambda n: base(n) not in FUSED)
        fus, fus_name = best(t, lambda n: base(n) in FUSED)
        win = float(r["timeUs"]) if isinstance(r.get("timeUs"), (int, float)) else math.inf
        ratio = nccl / fus if math.isfinite(fus) else math.nan
        out.append("| %s | %d | %d | %s | %s `%s` | %s `%s` | %s `%s` | %s | %s |" % (
            r["dtype"], hidden, tokens, fmt(nccl), fmt(unf), unf_name, fmt(fus), fus_name, fmt(win),
            r["winner"], fmt(ratio), fmt(unf / win if win else math.nan)))
        if tokens <= SPEEDUP_TOKENS and not ratio >= SPEEDUP_BAR:
            fails.append("%d x %d: NCCL/fused %.2f < %.1f" % (hidden, tokens, ratio, SPEEDUP_BAR))
        if unf < win * (1 - NOISE_PERCENT / 100) - 1e-9:
            fails.append("%d x %d: winner %.2f slower than best unfused %.2f" % (
                hidden, tokens, win, unf))
    out.append("\nbars (%s): %s" % (mode, "met" if not fails else "NOT met: " + "; ".join(fails)))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    out = []
    for mode in ("graph", "eager"):
        doc = load(os.path.join(outdir, mode + ".json"))
        if doc is None:
            out.append("\n## %s: %s.json missing" % (mode, mode))
            continue
        table(mode, doc, out)
    print("\n".join(out))


if __name__ == "__main__":
    main()

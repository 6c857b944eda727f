#!/usr/bin/env python3
"""Exhaustive against adaptive search on summaries already written (`ccltune tune --json`).

For GPU runs, where tests/gpu/tune_on_device.sh (sections searchN) runs the same plan with
both searches back to back in one device call. Prints per adaptive run: same winner (%),
where it differs how much slower the adaptive winner was in the exhaustive run and what the
adaptive run did with the exhaustive winner, and the time split (tuningS and its parts) with
the adaptive / exhaustive ratio; and the agreement of the exhaustive runs with each other.

  python3 tests/bench/search_compare.py --exhaustive e1.json e2.json --adaptive a1.json a2.json
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from adaptive_vs_exhaustive import compare, same_winners  # noqa: E402

PARTS = ("tuningS", "timedRunsS", "prepareS", "warmupS", "verifyS", "barriersS", "screeningS",
         "fullS")


def load(path):
    with open(path) as f:
        return json.load(f)


def statuses(summary):
    """How many choices ended ok, skipped, pruned, wrong, failed, timeout."""
    counts = {}
    for r in summary["records"]:
        for c in r["choices"]:
            counts[c["status"]] = counts.get(c["status"], 0) + 1
    return counts


def timing_row(label, summary, base=None):
    t = summary["timing"]
    cells = ["%.2f" % t.get(k, float("nan")) for k in PARTS]
    ratio = "%.2f" % (t["tuningS"] / base["timing"]["tuningS"]) if base else ""
    s = summary.get("screening", {})
    return "| %s | %s | %s | %s |" % (label, " | ".join(cells), ratio,
                                      "%s/%s" % (s.get("screened", 0), s.get("pruned", 0)))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--exhaustive", nargs="+", required=True)
    p.add_argument("--adaptive", nargs="+", required=True)
    args = p.parse_args()
    ex = [load(f) for f in args.exhaustive]
    ad = [load(f) for f in args.adaptive]
    print("| run | " + " | ".join(PARTS) + " | / exhaustive 1 | screened/pruned |")
    print("|---" * (len(PARTS) + 3) + "|")
    for i, s in enumerate(ex):
        print(timing_row("exhaustive %d" % (i + 1), s, ex[0]))
    for i, s in enumerate(ad):
        print(timing_row("adaptive %d" % (i + 1), s, ex[min(i, len(ex) - 1)]))
    print()
    for label, runs in (("exhaustive", ex), ("adaptive", ad)):
        for i, summary in enumerate(runs):
            print("%s %d: choice statuses %s" % (label, i + 1, json.dumps(statuses(summary),
                                                                           sort_keys=True)))
    for i in range(1, len(ex)):
        n = len(ex[0]["records"])
        print("exhaustive 1 vs %d: same winner %d of %d (%.1f %%)"
              % (i + 1, same_winners(ex[0], ex[i]), n, 100.0 * same_winners(ex[0], ex[i]) / n))
    for i, a in enumerate(ad):
        e = ex[min(i, len(ex) - 1)]
        c = compare(e, a)
        print("adaptive %d vs exhaustive %d: same winner %d of %d (%.1f %%), time %.2f"
              % (i + 1, min(i, len(ex) - 1) + 1, c["same"], c["problems"],
                 100.0 * c["same"] / c["problems"],
                 a["timing"]["tuningS"] / e["timing"]["tuningS"]))
        for d in c["differ"]:
            slower = d["slowerPercent"]
            print("  %s: exhaustive %s, adaptive %s, %s slower in the exhaustive run; "
                  "exhaustive winner in the adaptive run: %s"
                  % (d["problem"], d["exhaustive"], d["adaptive"],
                     "%.1f %%" % slower if slower is not None else "?",
                     d["exhaustiveWinnerInAdaptiveRun"]))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The hierarchical all-reduce's own figure per size (issue 33), from `ccltune tune --json`.

For tests/gpu/tune_on_device.sh nodesN (emulated nodes). Per allReduce size: NCCL's default,
the fastest `hier:` grid that ran and verified (its time and speedup over the default; else
its status and reason, e.g. skipped or pruned), and the winner with its time and speedup.
Reads the choices every record carries (docs/design.md §4: choices[{name, timeUs, status, reason}]).

  python3 tests/gpu/nodes_table.py nodes4-exhaustive.json [nodes4-adaptive.json ...]
"""

import json
import sys


def num(v):
    return v if isinstance(v, (int, float)) and v == v and v not in (float("inf"),) else None


def hier_cell(choices):
    """(label, time) of the fastest ok hier grid, or (status: reason, None)."""
    hiers = [c for c in choices if c.get("name", "").startswith("hier")]
    if not hiers:
        return "not offered", None
    ok = [c for c in hiers if c.get("status") == "ok" and num(c.get("timeUs"))]
    if ok:
        best = min(ok, key=lambda c: c["timeUs"])
        return label(best["name"], best.get("params")), best["timeUs"]
    c = hiers[0]
    return "%s: %s" % (c.get("status"), c.get("reason", "")), None


def label(name, params):
    """A choice's full name (summaries spell the params out already; older ones did not)."""
    if not name or not params or ":" in name:
        return name or "-"
    return name + ":" + ",".join("%s=%s" % (k, params[k]) for k in sorted(params))


def ratio(default, t):
    return "%.2fx" % (default / t) if num(default) and num(t) else "-"


def table(path):
    with open(path) as f:
        doc = json.load(f)
    print("%s (allReduce; µs, max over ranks, median of rounds)\n" % path)
    print("| bytes | dtype | default | hier (fastest grid) | hier | hier speedup | winner | "
          "winner time | winner speedup |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows = 0
    for r in doc.get("records", []):
        if r.get("op") != "allReduce" or r.get("epilogue"):
            continue
        default = num(r.get("defaultTimeUs"))
        grid, t = hier_cell(r.get("choices") or [])
        print("| %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["bytes"], r.get("dtype"), "%.2f" % default if default else "-", grid,
            "%.2f" % t if t else "-", ratio(default, t), label(r.get("winner"), r.get("winnerParams")),
            "%.2f" % r["timeUs"] if num(r.get("timeUs")) else "-",
            ratio(default, r.get("timeUs"))))
        rows += 1
    if rows == 0:
        print("| (no allReduce records) |||||||||")
    print()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        table(path)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Issue 33's network-settings table: NCCL's default against each `nccl-net:` setting.

Reads a `ccltune tune --json` summary of a job over emulated nodes whose choices include
`nccl` and `nccl-net:` settings (tests/gpu/tune_on_device.sh netsettings). Every setting was
measured by rank processes of its own, started with its environment (NCCL reads these
settings once per process). Per problem: NCCL's default (µs), each setting's time (or its
status), the winner and its speedup over the default; then, per setting, its processes' time
and what NCCL's log said in them (nodes, transports, socket threads); then, per setting, the
geometric mean of default/setting over the sizes where it ran and how often it won.

Run: python3 tests/gpu/net_settings_table.py SUMMARY.json
"""
import json
import math
import sys


def short(name):
    return name.replace("nccl-net:", "").replace("socketThreads", "T").replace(
        "socksPerThread", "S").replace("buffSize=16777216", "buf=16M")


def cell(choice):
    if choice is None:
        return "-"
    if choice["status"] == "ok":
        return "%.1f" % choice["timeUs"]
    return choice["status"]


def main(path):
    with open(path) as f:
        summary = json.load(f)
    records = summary["records"]
    settings = [s["name"] for s in summary.get("processSettings", [])]
    for r in records:
        for c in r["choices"]:
            if c["name"].startswith("nccl-net:") and c["name"] not in settings:
                settings.append(c["name"])
    print("| op | bytes | nccl (µs) | " + " | ".join(short(s) for s in settings) +
          " | winner | speedup |")
    print("|---" * (len(settings) + 5) + "|")
    ratios = {s: [] for s in settings}
    wins = {s: 0 for s in settings}
    for r in records:
        by = {c["name"]: c for c in r["choices"]}
        default = by.get("nccl")
        row = [r["op"], str(r["bytes"]), cell(default)]
        for s in settings:
            row.append(cell(by.get(s)))
            c = by.get(s)
            if c and c["status"] == "ok" and default and default["status"] == "ok":
                ratios[s].append(default["timeUs"] / c["timeUs"])
        if r.get("winner") in wins:
            wins[r["winner"]] += 1
        row += [short(r.get("winner", "-")), "%.2fx" % r.get("speedupVsDefault", 1)]
        print("| " + " | ".join(row) + " |")
    print()
    for s in summary.get("processSettings", []):
        topo = s.get("ncclTopology", {})
        print("- %s: %s, %.1f s; nNodes %s; inter-node %s; NET/Socket %s%s" % (
            s["name"], s["status"], s.get("seconds", 0), topo.get("nNodes", "?"),
            "+".join(topo.get("interNode", [])) or "?",
            ", ".join(topo.get("netSocket", [])) or "no helper threads logged",
            ("; " + s["reason"]) if s.get("reason") else ""))
    # The first reason a choice was skipped (e.g. ibQps without IB).
    for s in settings:
        for r in records:
            c = {x["name"]: x for x in r["choices"]}.get(s)
            if c and c["status"] == "skipped":
                print("- %s skipped: %s" % (s, c.get("reason", "")))
                break
    print()
    for s in settings:
        v = ratios[s]
        if v:
            g = math.exp(sum(math.log(x) for x in v) / len(v))
            print("- %s: default/setting geomean %.2fx over %d sizes (min %.2fx, max %.2fx); "
                  "won %d of %d" % (s, g, len(v), min(v), max(v), wins[s], len(records)))
    t = summary.get("timing", {})
    print("- processSettingsS %.1f, tuningS %.1f (the job's own choices)" % (
        t.get("processSettingsS", 0), t.get("tuningS", 0)))


if __name__ == "__main__":
    main(sys.argv[1])

#!/usr/bin/env python3
"""Checks what a real Prometheus scraped from telemetry_delay_program.py's ranks (issue 45).

  telemetry_check.py PROM_URL PROGRAM_JSON SOURCE DASHBOARD_JSON [--md OUT.md]

SOURCE: ccltune (our kernels, method "kernel") or nccl (the profiler plugin, method
"min-over-ranks"). Per phase of the program (one size each) and rank, the mean sync wait
Prometheus holds (sync-wait _sum / _count of that source's method, the last values scraped):
the late rank's must be at most 5 µs, every other rank's the delay measured on the late rank
within 10 % + 5 µs. NCCL's calls replayed from a CUDA graph: the profiler API reports them,
but with the sequence numbers of their capture, which the min-over-ranks split cannot match;
for those phases the calls' collective time is required and the split is only reported.
Every panel query of the Programs dashboard must return data (but the tuned-time panels for
NCCL alone, which no runtime publishes, and the dropped panel when nothing was dropped), and
its last-arriving-rank panel must name the late rank. Exit 1 on any miss; prints a table.
"""
import argparse
import json
import re
import sys
import urllib.parse
import urllib.request

UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
METHOD = {"ccltune": "kernel", "nccl": "min-over-ranks"}


def query(prom, expr):
    url = prom + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError("%s: %s" % (expr, body))
    return body["data"]["result"]


def size_bytes(label):
    m = re.fullmatch(r"(\d+)\s*(B|KiB|MiB|GiB)", label)
    return int(m.group(1)) * UNITS[m.group(2)] if m else None


def nearest_pow2(n):
    p = 1
    while p * 2 <= n:
        p *= 2
    return p if n - p <= 2 * p - n else 2 * p


def mean_waits(prom, method):
    """{(rank, bytes): (mean wait µs, calls)} from the last scraped sums and counts."""
    sel = '{method="%s"}' % method
    by = "sum by (rank, size) (last_over_time(ccltune_program_sync_wait_seconds_%s%s[30m]))"
    sums = {(r["metric"]["rank"], r["metric"]["size"]): float(r["value"][1])
            for r in query(prom, by % ("sum", sel))}
    counts = {(r["metric"]["rank"], r["metric"]["size"]): float(r["value"][1])
              for r in query(prom, by % ("count", sel))}
    out = {}
    for key, c in counts.items():
        b = size_bytes(key[1])
        if c > 0 and b is not None:
            out[(int(key[0]), b)] = (sums.get(key, 0.0) / c * 1e6, int(c))
    return out


def collective_counts(prom, source):
    """{bytes: calls} of the collective-time histogram of `source`."""
    res = query(prom, 'sum by (size) (last_over_time(ccltune_program_collective_seconds_count'
                      '{source="%s"}[30m]))' % source)
    return {size_bytes(s["metric"]["size"]): int(float(s["value"][1])) for s in res}


def may_be_empty(title, expr, source):
    return "Dropped" in title or (source == "nccl" and "tuned_seconds" in expr)


def panel_queries(dashboard):
    def walk(panels):
        for p in panels:
            yield p
            yield from walk(p.get("panels", []))
    with open(dashboard) as f:
        d = json.load(f)
    for p in walk(d.get("panels", [])):
        for t in p.get("targets", []):
            if t.get("expr"):
                yield p.get("title", "?"), t["expr"]


def substitute(expr):
    """Grafana's template variables, as 'every value'."""
    expr = re.sub(r'=~?\s*"\$\{?\w+\}?"', '=~".*"', expr)
    return expr.replace("$__rate_interval", "1m").replace("$__interval", "1m").replace(
        "$__range", "30m")


def main():
    a = argparse.ArgumentParser()
    a.add_argument("prom")
    a.add_argument("program_json")
    a.add_argument("source", choices=sorted(METHOD))
    a.add_argument("dashboard")
    a.add_argument("--md")
    args = a.parse_args()
    with open(args.program_json) as f:
        prog = json.load(f)
    world, late = prog["world"], prog["late_rank"]
    waits = mean_waits(args.prom, METHOD[args.source])
    totals = collective_counts(args.prom, args.source)
    lines = ["| mode | bytes | delay (µs, measured) | rank | mean sync wait (µs) | calls split | "
             "allowed | ok |", "|---|---|---|---|---|---|---|---|"]
    bad = 0
    for ph in prog["phases"]:
        d = ph["measured_delay_us"]
        if ph["wrong"] != 0:
            print("phase %s: %d wrong elements" % (ph, ph["wrong"]))
            bad += 1
        timed = totals.get(nearest_pow2(ph["bytes"]), 0)
        lines.append("| %s | %d | %.1f | all | calls timed (every rank): %d | | | %s |" % (
            ph["mode"], ph["bytes"], d, timed, "yes" if timed > 0 else "NO"))
        bad += 0 if timed > 0 else 1
        report_only = args.source == "nccl" and ph["mode"] == "graph"
        for r in range(world):
            got = waits.get((r, nearest_pow2(ph["bytes"])))
            lo, hi = (0.0, 5.0) if r == late else (d - 0.1 * d - 5, d + 0.1 * d + 5)
            ok = got is not None and lo <= got[0] <= hi
            if report_only:
                lines.append("| %s | %d | %.1f | %d | %s | %s | (reported only) | — |" % (
                    ph["mode"], ph["bytes"], d, r, "%.1f" % got[0] if got else "none",
                    got[1] if got else 0))
                continue
            bad += 0 if ok else 1
            lines.append("| %s | %d | %.1f | %d%s | %s | %s | %.1f–%.1f | %s |" % (
                ph["mode"], ph["bytes"], d, r, " (late)" if r == late else "",
                "%.1f" % got[0] if got else "none", got[1] if got else 0, max(lo, 0), hi,
                "yes" if ok else "NO"))
    lines.append("")
    for title, expr in panel_queries(args.dashboard):
        res = query(args.prom, substitute(expr))
        named = sorted({s["metric"].get("rank", "") for s in res})
        ok = bool(res) or may_be_empty(title, expr, args.source)
        if res and re.search(r"arriv\w* last|last.arriv", title, re.I):
            ok = ok and named == [str(late)]
        bad += 0 if ok else 1
        lines.append("- panel `%s`: %d series%s %s" % (
            title, len(res), ", ranks " + ",".join(named) if named != [""] else "",
            "ok" if ok else "MISSING or WRONG"))
    text = "\n".join(lines)
    print(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

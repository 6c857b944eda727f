#!/usr/bin/env python3
"""Plain against preloaded runs of train_steps_program.py (issue 43).

    python3 tests/gpu/train_steps_table.py PLAIN.json PRELOADED.json

Per program: ms per step plain and preloaded, plain / preloaded, and how far the final
weights moved apart (relative difference of the parameter sums and sums of squares: our
kernels sum in rank order, NCCL in its own, so bitwise equality is not expected). Then, from
the profiled steps, the collectives' GPU time per step and per call, plain against
preloaded (NCCL's kernels, ours, and device copies, which the staged choices add), and each
kernel's calls and µs per call.
"""
import json
import sys


def main():
    with open(sys.argv[1]) as f:
        plain = {r["program"]: r for r in json.load(f)["results"]}
    with open(sys.argv[2]) as f:
        pre = {r["program"]: r for r in json.load(f)["results"]}
    print("| program | plain (ms/step) | preloaded (ms/step) | plain / preloaded | "
          "param sum rel. diff | sum of squares rel. diff |")
    print("|---|---|---|---|---|---|")
    for name in plain:
        if name not in pre:
            continue
        a, b = plain[name], pre[name]
        rel = lambda k: abs(a[k] - b[k]) / max(abs(a[k]), 1e-30)
        print("| %s | %.3f | %.3f | %.3fx | %.2e | %.2e |" % (
            name, a["msPerStep"], b["msPerStep"], a["msPerStep"] / b["msPerStep"],
            rel("paramSum"), rel("paramSumSq")))
    for name in plain:
        if name in pre and "collectives" in plain[name] and "collectives" in pre[name]:
            per_call_table(name, plain[name]["collectives"], pre[name]["collectives"])
    return 0


def kind(group):
    if group == "Memcpy DtoD":
        return "copies"
    return "NCCL" if group.startswith("nccl") else "ccltune"


def totals(acts):
    """(calls, µs) per step of the collective kernels (copies apart), and per kind."""
    by_kind = {}
    for g, v in acts.items():
        k = by_kind.setdefault(kind(g), [0.0, 0.0])
        k[0] += v["calls"]
        k[1] += v["us"]
    calls = sum(v[0] for k, v in by_kind.items() if k != "copies")
    us = sum(v[1] for v in by_kind.values())
    return calls, us, by_kind


def per_call_table(program, plain, pre):
    pc, pu, pk = totals(plain)
    sc, su, sk = totals(pre)
    print("\n%s: collectives' GPU time per step (kernels and device copies)\n" % program)
    print("| run | collective calls / step | µs / step | µs / call | NCCL calls | ccltune calls "
          "| copies / step |")
    print("|---|---|---|---|---|---|---|")
    for run, calls, us, k in (("plain", pc, pu, pk), ("preloaded", sc, su, sk)):
        print("| %s | %.1f | %.1f | %.2f | %.1f | %.1f | %.1f |" % (
            run, calls, us, us / calls if calls else 0, k.get("NCCL", [0, 0])[0],
            k.get("ccltune", [0, 0])[0], k.get("copies", [0, 0])[0]))
    if su > 0:
        print("\nplain / preloaded, collectives' time per step: %.2fx" % (pu / su))
    print("\n| run | activity | calls / step | µs / call |\n|---|---|---|---|")
    for run, acts in (("plain", plain), ("preloaded", pre)):
        for g, v in sorted(acts.items(), key=lambda kv: -kv[1]["us"]):
            short = g if len(g) <= 90 else g[:87] + "..."
            print("| %s | `%s` | %.1f | %.2f |" % (run, short, v["calls"],
                                                  v["us"] / v["calls"] if v["calls"] else 0))


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Plain against preloaded runs of train_steps_program.py (issue 43).

    python3 tests/gpu/train_steps_table.py PLAIN.json PRELOADED.json

Per program: ms per step plain and preloaded, plain / preloaded, and how far the final
weights moved apart (relative difference of the parameter sums and sums of squares: our
kernels sum in rank order, NCCL in its own, so bitwise equality is not expected).
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
    return 0


if __name__ == "__main__":
    sys.exit(main())

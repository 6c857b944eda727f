#!/usr/bin/env python3
"""Side-by-side table of one device call (issue 15): ccltune's runtime through ccltune.torch
against the time `ccltune tune` measured for the same winner, against torch.distributed's
NCCL and PyTorch's symmetric-memory one-/two-shot, per mode.

    runtime_vs_tune.py BENCH.json WINNERS-GRAPH.json WINNERS-EAGER.json

BENCH.json: torch_symm_bench.py --ccltune-winners ... --json; the winners files: `ccltune
export --format json` of the graph and eager tune. Prints a markdown table per mode and the
bars: runtime within 5 % of tune's time for its winner at every size, geomean over NCCL,
worst ratio to NCCL (bar: never more than 3 % slower).
"""
import json
import math
import sys


def fmt(n):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return "%d %s" % (n >> shift, unit)
    return "%d B" % n


def main(bench_path, graph_path, eager_path):
    bench = json.load(open(bench_path))
    by = {(r["bytes"], r["mode"], r["kernel"]): r for r in bench["records"]}
    winners = {}
    for mode, path in (("graph", graph_path), ("eager", eager_path)):
        for rec in json.load(open(path)):
            if rec["op"] == "allReduce" and rec["dtype"] == "bf16" and rec["redop"] == "sum":
                winners[(rec["bytes"], mode)] = rec

    def t(b, m, k):
        r = by.get((b, m, k))
        return r["timeUs"] if r and r["status"] == "ok" else None

    print("%d x %s, torch %s, NCCL %s; us per op, median of rounds, max over ranks"
          % (bench["worldSize"], bench["gpu"], bench["torchVersion"], bench["ncclVersion"]))
    for mode in ("graph", "eager"):
        print("\n%s mode, bf16 allReduce sum\n" % mode)
        print("| size | torch NCCL | tune winner | tune time | runtime (pool) | runtime / tune |"
              " runtime (plain) | torch one-shot | torch two-shot | NCCL / runtime |")
        print("|" + "---|" * 10)
        ratios, vs_tune = [], []
        for b in sorted({k[0] for k in by if k[1] == mode}):
            w = winners.get((b, mode))
            nccl, rt, plain = t(b, mode, "nccl"), t(b, mode, "ccltune"), t(b, mode, "ccltune-plain")
            one, two = t(b, mode, "one_shot"), t(b, mode, "two_shot")
            tune = w["timeUs"] if w else None
            if rt and tune:
                vs_tune.append((rt / tune, b))
            if rt and nccl:
                ratios.append((nccl / rt, b))
            cell = lambda v: "%.2f" % v if v else "-"
            print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                fmt(b), cell(nccl), w["winner"] if w else "-", cell(tune), cell(rt),
                "%.3f" % (rt / tune) if rt and tune else "-", cell(plain), cell(one), cell(two),
                "%.2fx" % (nccl / rt) if rt and nccl else "-"))
        if ratios:
            geo = math.exp(sum(math.log(r) for r, _ in ratios) / len(ratios))
            worst = min(ratios)
            print("\ngeomean NCCL / runtime %.3fx over %d sizes; worst %.3fx at %s" % (
                geo, len(ratios), worst[0], fmt(worst[1])))
        if vs_tune:
            far = max(vs_tune)
            print("runtime / tune's winner time: worst %.3f at %s (bar 1.05)" % (far[0], fmt(far[1])))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))

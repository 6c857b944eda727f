"""An unmodified PyTorch program on emulated nodes, plain and with ccltune's delivery (issue 33).

  nodes_torch_check.py --out DIR --sizes MIN:MAX:FACTOR|BYTES,... --winners FILE
                       --shim SO --plugin SO
                       [--gpus 4] [--nodes 2] [--modes plain,preload,plugin,both]

Starts nodes_torch_program.py as torchrun would (one process per GPU, MASTER_ADDR/PORT,
RANK, WORLD_SIZE, LOCAL_RANK), ranks split into --nodes groups of consecutive ranks that
learn their node only from the environment. Modes:
  plain    NCCL_HOSTID=<node>: NCCL's defaults on the split
  preload  LD_PRELOAD=libccltune-nccl.so, CCLTUNE_RESULTS_FILE=winners,
           CCLTUNE_NODE_NAME=<node> (no NCCL_HOSTID: the library sets it from the node name)
  plugin   NCCL_TUNER_PLUGIN=libnccl-tuner-ccltune.so, CCLTUNE_RESULTS_FILE, NCCL_HOSTID
  both     the library and the plugin together, CCLTUNE_NODE_NAME
Every mode runs with NCCL_DEBUG=INFO (INIT,NET, to a file): the nNodes NCCL formed and the
transports between ranks of different nodes are read from NCCL's own log. Prints per op and
size each mode's time and its ratio to plain, whether its results were right (against the
exact result, and its output sample against plain's within bf16 tolerance), and what
ccltune said. Exit 1 when a mode failed to run, formed another node count, or gave a wrong
result.
"""
import argparse
import glob
import json
import os
import re
import socket
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
RTOL, ATOL = 2e-2, 3e-2
RANK_TIMEOUT_S = 400
# A program's own lines worth keeping from its stderr: ccltune's and the plugin's.
CCLTUNE_LINE = re.compile(r"ccltune(-nccl)?:|TUNER/Plugin|ccltune tuner")


def parse_sizes(text):
    """`ccltune tune --sizes`' forms: MIN:MAX:FACTOR (units KiB, MiB, GiB) or a comma list."""
    unit = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}

    def one(v):
        m = re.fullmatch(r"(\d+)(KiB|MiB|GiB)?", v.strip())
        if not m:
            sys.exit("--sizes: %r is not a size (bytes, or with KiB, MiB, GiB)" % v)
        return int(m.group(1)) * unit.get(m.group(2), 1)

    if ":" not in text:
        return [one(v) for v in text.split(",")]
    lo, hi, factor = text.split(":")
    out, v = [], one(lo)
    while v <= one(hi):
        out.append(v)
        v *= int(factor)
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mode_env(mode, node, a):
    """What a rank of `mode` on `node` gets beyond torchrun's variables."""
    env = {}
    if mode in ("preload", "both"):
        env.update(LD_PRELOAD=a.shim, CCLTUNE_RESULTS_FILE=a.winners, CCLTUNE_NODE_NAME=node)
    else:
        env["NCCL_HOSTID"] = node
    if mode in ("plugin", "both"):
        env.update(NCCL_TUNER_PLUGIN=a.plugin, CCLTUNE_RESULTS_FILE=a.winners)
    return env


def run_mode(mode, a, sizes):
    """Runs the program's ranks; (rank 0's JSON or None, every rank's exit code)."""
    port, per_node = free_port(), a.gpus // a.nodes
    prefix = os.path.join(a.out, mode)
    procs = []
    for r in range(a.gpus):
        env = {k: v for k, v in os.environ.items()
               if k not in ("NCCL_HOSTID", "CCLTUNE_NODE_NAME", "LD_PRELOAD",
                            "NCCL_TUNER_PLUGIN", "CCLTUNE_RESULTS_FILE")}
        env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(r),
                   WORLD_SIZE=str(a.gpus), LOCAL_RANK=str(r), LOCAL_WORLD_SIZE=str(a.gpus),
                   NCCL_DEBUG="INFO", NCCL_DEBUG_SUBSYS="INIT,NET,TUNING",
                   NCCL_DEBUG_FILE="%s.nccl.%d.log" % (prefix, r))
        env.update(mode_env(mode, "node%d" % (r // per_node), a))
        log = open("%s.rank%d.log" % (prefix, r), "w")
        procs.append((subprocess.Popen(
            [sys.executable, os.path.join(HERE, "nodes_torch_program.py"), prefix] +
            [str(s) for s in sizes], env=env, stdout=log, stderr=subprocess.STDOUT), log))
    codes = []
    for p, log in procs:
        try:
            codes.append(p.wait(timeout=RANK_TIMEOUT_S))
        except subprocess.TimeoutExpired:
            p.kill()
            codes.append("timeout")
        log.close()
    if any(c != 0 for c in codes):
        for p, _ in procs:
            if p.poll() is None:
                p.kill()
        return None, codes
    with open(prefix + ".json") as f:
        return json.load(f), codes


def nccl_view(mode, a):
    """(nNodes values, transports between ranks of different nodes) from NCCL's logs.

    Only the program's own communicator (nRanks = the world) counts for nNodes: the library
    splits others off it (the hierarchical all-reduce's node and local-rank communicators).
    Links are judged by the CUDA devices NCCL prints in brackets (rank r runs on device r),
    which, unlike the ranks, are not renumbered in a split communicator."""
    per_node, nodes, between = a.gpus // a.nodes, set(), set()
    link = re.compile(r"Channel \d+(?:/\d+)? : \d+\[(\d+)\] -> \d+\[(\d+)\]"
                      r"(?: \[(?:send|receive)\])? via (\S+)")
    for path in glob.glob(os.path.join(a.out, mode + ".nccl.*.log")):
        with open(path, errors="replace") as f:
            for line in f:
                m = re.search(r"nRanks (\d+) nNodes (\d+) ", line)
                if m and int(m.group(1)) == a.gpus:
                    nodes.add(int(m.group(2)))
                m = link.search(line)
                if m and int(m.group(1)) // per_node != int(m.group(2)) // per_node:
                    between.add("/".join(m.group(3).split("/")[:2]))  # NET/Socket, P2P/CUMEM
    return sorted(nodes), sorted(between)


def said(mode, a):
    """ccltune's own lines (library, plugin) from rank 0's stderr and NCCL log."""
    lines = []
    for path in (os.path.join(a.out, mode + ".rank0.log"),
                 os.path.join(a.out, mode + ".nccl.0.log")):
        if os.path.exists(path):
            with open(path, errors="replace") as f:
                lines += [l.rstrip() for l in f if CCLTUNE_LINE.search(l)]
    return lines[:12]


def differs_from_plain(mode, a):
    """Samples outside bf16 tolerance of the plain run's, summed over ranks and keys."""
    bad = 0
    for r in range(a.gpus):
        plain = torch.load(os.path.join(a.out, "plain.rank%d.pt" % r))
        other = torch.load(os.path.join(a.out, "%s.rank%d.pt" % (mode, r)))
        for key, want in plain.items():
            got = other.get(key)
            if got is None or got.shape != want.shape:
                bad += want.numel()
                continue
            bad += int(((got - want).abs() > ATOL + RTOL * want.abs()).sum())
    return bad


def table(runs, modes):
    head = "| op | bytes | " + " | ".join(
        "%s us%s" % (m, "" if m == "plain" else " | speedup") for m in modes) + " | right |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    base = {(r["op"], r["bytes"]): r for r in runs["plain"]["results"]}
    for key, p in base.items():
        cells, right = [], True
        for m in modes:
            row = next((r for r in runs[m]["results"] if (r["op"], r["bytes"]) == key), None)
            if row is None:
                cells.append("-" if m == "plain" else "- | -")
                continue
            right = right and row["wrong"] == 0
            cells.append("%.1f" % row["us"] if m == "plain"
                         else "%.1f | %.2f" % (row["us"], p["us"] / row["us"]))
        print("| %s | %d | %s | %s |" % (key[0], key[1], " | ".join(cells),
                                         "yes" if right else "NO"))


def main():
    ap = argparse.ArgumentParser()
    for name in ("--out", "--sizes", "--winners", "--shim", "--plugin"):
        ap.add_argument(name, required=True)
    ap.add_argument("--gpus", type=int, default=4)
    ap.add_argument("--nodes", type=int, default=2)
    ap.add_argument("--modes", default="plain,preload,plugin,both")
    a = ap.parse_args()
    modes = a.modes.split(",")
    if modes[0] != "plain" or a.gpus % a.nodes != 0:
        sys.exit("--modes must start with plain (the reference), and --nodes divide --gpus")
    sizes = parse_sizes(a.sizes)
    os.makedirs(a.out, exist_ok=True)
    failed, runs = [], {}
    for m in modes:
        runs[m], codes = run_mode(m, a, sizes)
        nodes, between = nccl_view(m, a)
        print("## %s: exit codes %s; NCCL nNodes %s; between nodes via %s" %
              (m, codes, nodes or "?", ", ".join(between) or "?"))
        for line in said(m, a):
            print("    " + line)
        if runs[m] is None:
            failed.append("%s did not run (exit codes %s)" % (m, codes))
        elif nodes != [a.nodes]:
            failed.append("%s: NCCL formed nNodes %s, not %d" % (m, nodes, a.nodes))
    modes = [m for m in modes if runs.get(m) is not None]
    if "plain" not in modes:
        sys.exit("plain did not run: nothing to compare")
    for m in modes:
        wrong = sum(r["wrong"] for r in runs[m]["results"])
        off = differs_from_plain(m, a) if m != "plain" else 0
        print("## %s: %d wrong elements against the exact result, %d samples outside bf16 "
              "tolerance of plain's" % (m, wrong, off))
        if wrong or off:
            failed.append("%s: wrong results (%d exact, %d against plain)" % (m, wrong, off))
    print()
    table(runs, modes)
    for f in failed:
        print("FAILED: " + f)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

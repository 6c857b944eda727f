"""Generators for tests/readme/readme_figures.py: README tables and derived figures, made
from the results files they come from.

Each takes the path named before the "#" of `<!-- figures: PATH#NAME -->` and returns text:
inside a <!-- /figures --> region, the exact lines the README must hold; in prose, text
whose numbers the annotated block may quote. A new table or derived figure gets a function
here and an entry in GENERATORS.
"""

import glob
import io
import math
import json
import os
import re
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bench"))
sys.path.insert(0, os.path.join(HERE, "..", "gpu"))
from adaptive_vs_exhaustive import NOISE_PERCENT, fmt_list  # noqa: E402
import epilogue_table  # noqa: E402


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def md_table(text, caption):
    """The first Markdown table after the first line that starts with `caption` (before the
    next heading), as a list of rows (lists of cell strings), the header row first and the
    |---| row left out."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith(caption):
            rows = []
            for row in lines[i + 1:]:
                if not rows and not row.lstrip().startswith("|"):
                    if row.startswith("#"):
                        break
                    continue   # text between the caption and its table
                if not row.lstrip().startswith("|"):
                    break
                cells = [c.strip() for c in row.strip().strip("|").split("|")]
                if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                    rows.append(cells)
            if rows:
                return rows
    raise LookupError("no table after a line starting %r" % caption)


def md_row(cells):
    """A Markdown table row; an empty cell is one space, as hand-written tables have it."""
    return "|" + "|".join(" %s " % c if c else " " for c in cells) + "|"


def column(rows, name):
    return rows[0].index(name)


def torch_graph(path):
    """runtime-2xH200.md's PyTorch graph table, at the five sizes the README shows."""
    text = read(path)
    rows = md_table(text, "graph mode, bf16 allReduce sum")
    nccl = re.search(r"NCCL (\d+\.\d+\.\d+); us per op", text).group(1)
    sizes = ("1 KiB", "64 KiB", "1 MiB", "8 MiB", "64 MiB")
    by_size = {r[0]: r for r in rows[1:]}

    def cells(*names):
        return [" / ".join(by_size[s][column(rows, n)] for n in names) for s in sizes]

    out = ["| bf16 allReduce, graph, µs | %s |" % " | ".join(sizes),
           "|---|---|---|---|---|---|"]
    for label, names in (("`dist.all_reduce` (NCCL %s)" % nccl, ("torch NCCL",)),
                         ("`ccltune.torch.all_reduce`, pooled", ("runtime (pool)",)),
                         ("same, ordinary tensor", ("runtime (plain)",)),
                         ("torch symmetric memory one-shot / two-shot",
                          ("torch one-shot", "torch two-shot"))):
        out.append("| %s | %s |" % (label, " | ".join(cells(*names))))
    return "\n".join(out) + "\n"


# --- the host side-by-side runs: tests/bench/results/adaptive-run{1,2}/ ---

HOST_RUNS = ("adaptive-run1", "adaptive-run2")


def host_runs(path):
    """[(run number, the run's adaptive-vs-exhaustive.json)] under tests/bench/results."""
    out = []
    for k, name in enumerate(HOST_RUNS, 1):
        with open(os.path.join(path, name, "adaptive-vs-exhaustive.json")) as f:
            out.append((k, json.load(f)))
    return out


PLAN_LABELS = {"default": ("default host plan (3 ops × fp32 × 1 KiB–4 MiB ×4)", 21),
               "large": ("larger (3 ops × fp32, bf16 × 1 KiB–16 MiB ×2)", 90)}


def pruned_count(row):
    return sum(d["exhaustiveWinnerInAdaptiveRun"] == "pruned" for d in row["differ"])


def adaptive_host_table(path):
    """The README's side-by-side table of the two host runs, per plan and run."""
    runs = host_runs(path)
    out = ["| plan | problems | run | same winner | same winner, exhaustive vs exhaustive | "
           "differences where the adaptive run pruned the exhaustive winner | tuning s, "
           "exhaustive | tuning s, adaptive | adaptive / exhaustive | same, CPU time |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for plan, (label, problems) in PLAN_LABELS.items():
        for k, doc in runs:
            row = next(r for r in doc["rows"] if r["set"] == plan)
            assert row["problems"] == problems, (plan, row["problems"])
            first = k == runs[0][0]
            out.append(md_row([
                label if first else "", str(row["problems"]) if first else "", str(k),
                fmt_list(row["samePercent"]) + " %", fmt_list(row["exhaustiveSelfPercent"]) + " %",
                "%d of %d" % (pruned_count(row), len(row["differ"])),
                fmt_list(row["exhaustiveS"]), fmt_list(row["adaptiveS"]),
                fmt_list(row["ratio"], "%.2f"), fmt_list(row["cpuRatio"], "%.2f")]))
    return "\n".join(out) + "\n"


def adaptive_growth_table(path):
    """Tuning time against problems, both host runs side by side."""
    runs = host_runs(path)
    out = ["| problems | %s |" % " | ".join(
        "run %d: exhaustive / adaptive (s) | ratio" % k for k, _ in runs),
        "|---|" + "---|---|" * len(runs)]
    for i, g in enumerate(runs[0][1]["growth"]):
        cells = []
        for _, doc in runs:
            h = doc["growth"][i]
            assert h["problems"] == g["problems"]
            cells.append(", ".join("%.1f / %.1f" % t for t in zip(h["exhaustiveS"],
                                                                  h["adaptiveS"])))
            cells.append(fmt_list(h["ratio"], "%.2f"))
        out.append("| %d | %s |" % (g["problems"], " | ".join(cells)))
    return "\n".join(out) + "\n"


def span(values, f="%.1f"):
    return (f + "–" + f) % (min(values), max(values))


def adaptive_host_differences(path):
    """Where the two host runs' searches picked different winners: how many, how many had
    the exhaustive winner pruned, and how much faster that winner was in its exhaustive run
    (the adaptive winner's time there was `slowerPercent` more: faster by 1 - 1/(1 + s))."""
    rows = [r for _, doc in host_runs(path) for r in doc["rows"]]
    differ = [d for r in rows for d in r["differ"]]
    pruned = [d for d in differ if d["exhaustiveWinnerInAdaptiveRun"] == "pruned"]
    faster = [100 * (1 - 1 / (1 + d["slowerPercent"] / 100)) for d in pruned]
    sizes = sorted(int(d["problem"].split(":")[3]) for d in pruned)
    same = [p for r in rows for p in r["samePercent"]]
    self_same = [p for r in rows for p in r["exhaustiveSelfPercent"]]
    return "\n".join([
        "differing problems: %d; exhaustive winner measured in full: %d; pruned: %d" % (
            len(differ), len(differ) - len(pruned), len(pruned)),
        "pruned exhaustive winner faster in its exhaustive run: %s %%; adaptive winner "
        "slower there: %s %%" % (span(faster), span([d["slowerPercent"] for d in pruned])),
        "pruned at sizes %d to %d KiB" % (sizes[0] >> 10, sizes[-1] >> 10),
        "same winner: %s %%; two exhaustive runs: %s %%" % (span(same, "%.0f"),
                                                            span(self_same, "%.0f")),
        "time ratio: %s; floor share: %s" % (
            span([x for r in rows for x in r["ratio"]], "%.2f"),
            span([x for r in rows for x in r["floor"]], "%.2f"))]) + "\n"


JOB_LINE = re.compile(r"^\s+(\S+)\s+(\w+) (\w+)\s+(exhaustive|adaptive)\s+([\d.]+) s tuning")


def adaptive_host_jobs(path):
    """Per-job adaptive / exhaustive tuning time from both runs' logs, per op: the two jobs
    of one group and repeat ran back to back."""
    ratios = {}
    for name in HOST_RUNS:
        seen, pairs = {}, []
        for line in read(os.path.join(path, name, "log.txt")).split("\n"):
            m = JOB_LINE.match(line)
            if not m:
                continue
            plan, op, dtype, search, secs = m.groups()
            group = (plan, op, dtype)
            seen.setdefault(group, []).append((search, float(secs)))
            if len(seen[group]) % 2 == 0:
                pair = dict(seen[group][-2:])
                # At the two decimals the README quotes.
                pairs.append((op, round(pair["adaptive"] / pair["exhaustive"], 2)))
        for op, r in pairs:
            ratios.setdefault(op, []).append(r)
    two = ratios["allGather"] + ratios["reduceScatter"]
    near = sum(0.85 <= r <= 1.15 for r in two)
    return "\n".join([
        "allReduce jobs: %d, adaptive / exhaustive %s" % (len(ratios["allReduce"]),
                                                         span(ratios["allReduce"], "%.2f")),
        "allGather and reduceScatter jobs: %d, %s; %d of %d between 0.85 and 1.15" % (
            len(two), span(two, "%.2f"), near, len(two))]) + "\n"


def summaries(path, pattern):
    return sorted(glob.glob(os.path.join(path, pattern)))


def search_timing_ratios(path):
    """Adaptive / exhaustive for every timing part of the JSON summaries in a folder
    (`*exhaustive-N.json` against `*adaptive-N.json`), and each summary's statuses."""
    out = []
    for a in summaries(path, "*adaptive-[0-9].json"):
        e = os.path.join(path, os.path.basename(a).replace("adaptive-", "exhaustive-"))
        if not os.path.exists(e):
            continue
        ta, te = json.loads(read(a))["timing"], json.loads(read(e))["timing"]
        parts = sorted(k for k in ta if k in te and te[k])
        out.append("%s / %s: %s" % (os.path.basename(a), os.path.basename(e), ", ".join(
            "%s %.2f" % (k, ta[k] / te[k]) for k in parts)))
    return "\n".join(out) + "\n"


def same_winner_differences(path):
    """How many problems differ, for every "same winner X of Y" in a search_compare report."""
    pairs = re.findall(r"same winner (\d+) of (\d+)", read(path))
    return "differing problems: %s\n" % ", ".join(str(int(y) - int(x)) for x, y in pairs)


def host_floor(path):
    """What any search keeping docs/design.md §2 must measure in full, as a share of all choices'
    median op time in an exhaustive run (`ccltune tune --json`): the default and the winner
    alone; and with every choice within the noise threshold of the fastest too."""
    doc = json.loads(read(path))
    alone = near = total = 0.0
    for r in doc["records"]:
        ok = {c["name"]: c["timeUs"] for c in r["choices"]
              if c["status"] == "ok" and c.get("timeUs")}
        fastest = min(ok.values())
        total += sum(ok.values())
        # The record names only the default's time (the host default is `ring`).
        default = next(n for n, t in ok.items() if t == r["defaultTimeUs"])
        alone += sum(t for n, t in ok.items() if n in (default, r["winner"]))
        near += sum(t for n, t in ok.items()
                    if n == default or t <= fastest * (1 + NOISE_PERCENT / 100))
    return "problems %d; default and winner alone %.2f; with the choices within %.0f %% %.2f\n" % (
        len(doc["records"]), alone / total, NOISE_PERCENT, near / total)


def md_tables_after(text, heading):
    """Every (heading line, rows) whose heading line starts with `heading`."""
    out = []
    for m in re.finditer(r"^%s.*$" % re.escape(heading), text, re.M):
        out.append((m.group(0), md_table(text[m.start():], m.group(0))))
    return out


def nccl_tests_diffs(path):
    """The `nccl` choice against nccl-tests (eager busbw diff, %) per GPU count: the range below
    1 MiB and each op's worst |diff| at >= 1 MiB and at >= 2 MiB."""
    out = []
    for title, rows in md_tables_after(read(path), "### `nccl` choice vs nccl-tests,"):
        size, diff, op = (column(rows, n) for n in ("size", "diff", "op"))
        cells = [(r[op], int(r[size]), float(r[diff].rstrip("%"))) for r in rows[1:]]
        small = [d for _, b, d in cells if b < 1 << 20]
        out.append("%s: below 1 MiB %+.1f to %+.1f %%" % (title, min(small), max(small)))
        for o in sorted({c[0] for c in cells}):
            for lo in (1, 2):
                worst = max(abs(d) for x, b, d in cells if x == o and b >= lo << 20)
                out.append("  %s at >= %d MiB: worst |diff| %.1f %%" % (o, lo, worst))
    return "\n".join(out) + "\n"


def tune4_speedup_geomean(path):
    """Geometric mean of the speedup columns of tune-4xH200.md's allReduce winner table."""
    rows = md_table(read(path), "### allReduce bf16, 4 GPUs: NCCL default vs ccltune winner")
    out = []
    for k, name in enumerate(rows[0]):
        if name == "speedup":
            v = [float(r[k].rstrip("x")) for r in rows[1:]]
            out.append("geomean of column %d: %.2f" % (k, math.exp(
                sum(map(math.log, v)) / len(v))))
    return "\n".join(out) + "\n"


def epilogue_bars_graph(path):
    """tests/gpu/epilogue_table.py's graph table and bars for the exhaustive epilogue run in
    a device call's archive (search2-epilogue-exhaustive.json, `--cuda-graph`)."""
    with tarfile.open(path) as tar:
        doc = json.load(io.TextIOWrapper(tar.extractfile("search2-epilogue-exhaustive.json")))
    out = []
    epilogue_table.table("graph", doc, out)
    return "\n".join(out) + "\n"


def tune_output_abridged(path):
    """A `ccltune tune` console output cut to its first line, its first op's table, "..." and
    the job's summary lines, in a ``` block (the README's worked example)."""
    lines = read(path).split("\n")
    first_table = next(i for i, l in enumerate(lines) if l.startswith("# ") and " ranks, " in l)
    end = lines.index("", first_table)
    summary = next(i for i, l in enumerate(lines) if l.startswith("# local-"))
    last = next(i for i in range(summary, len(lines)) if not lines[i].startswith("#"))
    return "\n".join(["```", lines[0], ""] + lines[first_table:end] + ["..."] +
                     lines[summary:last] + ["```"]) + "\n"


def archive_statuses(path):
    """How many choices ended in each status, per `ccltune tune --json` summary in an archive."""
    out = []
    with tarfile.open(path) as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            if not m.name.endswith(".json"):
                continue
            doc = json.load(io.TextIOWrapper(tar.extractfile(m)))
            counts = {}
            for r in doc.get("records", []):
                for c in r["choices"]:
                    counts[c["status"]] = counts.get(c["status"], 0) + 1
            out.append("%s: %s" % (m.name, ", ".join("%s %d" % kv for kv in sorted(
                counts.items()))))
    return "\n".join(out) + "\n"


GENERATORS = {
    "torch-graph": torch_graph,
    "tune-output-abridged": tune_output_abridged,
    "adaptive-host-table": adaptive_host_table,
    "adaptive-growth-table": adaptive_growth_table,
    "adaptive-host-differences": adaptive_host_differences,
    "adaptive-host-jobs": adaptive_host_jobs,
    "search-timing-ratios": search_timing_ratios,
    "same-winner-differences": same_winner_differences,
    "host-floor": host_floor,
    "nccl-tests-diffs": nccl_tests_diffs,
    "tune4-speedup-geomean": tune4_speedup_geomean,
    "epilogue-bars-graph": epilogue_bars_graph,
    "archive-statuses": archive_statuses,
}

if __name__ == "__main__":
    # python3 tests/readme/readme_generators.py NAME PATH: prints a generator's output.
    print(GENERATORS[sys.argv[1]](sys.argv[2]), end="")

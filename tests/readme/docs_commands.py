#!/usr/bin/env python3
"""Every command in the shell blocks of README.md and docs/ runs as written, or says why not.

A page's commands are the lines of its fenced ```sh, ```bash, ```shell and ```console blocks
(in a console block, the lines after "$ "; the other lines are the output it shows). A line
ending in "\\" goes on; comment lines are no commands. Each command is in one of two tables:

  HERE       runs on the build machine: this test runs it, as written, and it must exit 0
             (and a console block's shown output lines must occur in what it prints);
  ELSEWHERE  needs what the build machine has not (a GPU, a cluster, a registry, root for
             packages), with the reason.

A command in neither table fails the test, naming the page and line, and so does an entry that
no page writes any more. The state a page's commands start from is the quickstart's: `make run`
ran (the build tree given by --build, and the winners of its tuning job in the cache) and
`make test` built everything. The commands run in a copy of the source tree in a temporary
folder (`build` there points at the build tree), with `ccltune` on PATH from the build. Each
page starts afresh: its own HOME and its own copy of the quickstart's cache, so no page sees
another's state and nothing touches the user's. A page's commands run in one shell, in order,
so a variable or function one defines reaches the next. A page whose commands use kubectl
gets its own API-server simulator (tests/k8s/sim) as the cluster; GIVEN lists what a page
assumes beyond the quickstart (another page's set-up).

  python3 tests/readme/docs_commands.py --build BUILD [--root DIR] [--report FILE] [--list]

--report writes the table of what ran and what did not (tests/bench/results/docs-commands.md).
ctest runs it as docs_commands (tests/readme/CMakeLists.txt).
"""

import argparse
import datetime
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE_DIR, "..", ".."))

LANGS = ("sh", "bash", "shell", "console")
FENCE = re.compile(r"^(\s*)(```|~~~)\s*([\w+-]*)\s*$")

# What `make run` runs after building (the Makefile's `run` target, RANKS=4): its winners are
# in the cache every page starts from.
QUICKSTART_TUNE = "ccltune tune --ranks 4 --backend host"

# Runs here, as written.
HERE = {
    # README.md, tuning.md
    "ccltune results",
    "ccltune results --op allReduce --dtype fp32 --bytes 3000",
    # tuning.md
    "ccltune tune --ranks 4 --backend host --op allReduce --sizes 4KiB:1MiB:4",
    "ccltune report --html report.html",
    "ccltune tune --plan manifests/examples/host-allreduce.yaml",
    "ccltune tune --op allReduce --dtypes fp32,bf16 --sizes 1KiB:64KiB:4 --json out.json",
    # search.md
    "ccltune tune --backend host --op allReduce --sizes 4KiB:1MiB:4 -v",
    "ccltune tune --backend host --op allReduce --sizes 4KiB:1MiB:4 --search exhaustive",
    # many-nodes.md
    "ccltune tune --backend host --ranks 4 --emulate-nodes 2 --op allReduce --sizes 4096",
    # winners.md
    "ccltune export --format json -o winners.json",
    # setup.md
    "python3 tests/readme/readme_figures.py README.md docs",
    "python3 tests/readme/readme_figures.py --write",
    "python3 tests/readme/readme_figures_test.py",
    # deploy.md, against the API-server simulator
    "kubectl apply -k manifests/",
    "kubectl wait --for condition=established crd/collectivetuningjobs.ccltune.io",
    "pw=$(openssl rand -hex 24)",
    "kubectl -n ccltune-system create secret generic ccltune-redis --from-literal=password=\"$pw\" "
    "--from-literal=reader-password=\"$(openssl rand -hex 24)\" "
    "--from-literal=telemetry-password=\"$(openssl rand -hex 24)\"",
    "kubectl -n default create secret generic ccltune-redis --from-literal=password=\"$pw\"",
    "kubectl apply -f manifests/examples/host-allreduce.yaml",
    "kubectl get ctj",
    "kubectl get ctj host-allreduce -o jsonpath='{.status.results}'",
    "kubectl apply -f manifests/examples/nccl-8gpu.yaml",
    "kubectl describe ctj host-allreduce",
    # inject.md, against the simulator after deploy.md's install (GIVEN)
    "kubectl label namespace team-a ccltune.io/inject-enabled=true",
    "get() { kubectl -n ccltune-system get secret ccltune-redis -o jsonpath=\"{.data.$1}\" "
    "| base64 -d; }",
    "kubectl -n team-a create secret generic ccltune-redis-reader "
    "--from-literal=password=\"$(get reader-password)\"",
    "kubectl -n team-a create secret generic ccltune-redis-telemetry "
    "--from-literal=password=\"$(get telemetry-password)\"",
}

QUICKSTART = ("the quickstart itself: the build tree and cache this test starts from are what it "
              "made")
GPU = "needs NVIDIA GPUs with NCCL (the nccl backend)"
IMAGE = "builds a container image: root, mmdebstrap, umoci and a Debian mirror, minutes"
DOCKER = "needs a container daemon and registry access (Docker or Podman)"
REGISTRY = "pushes to an image registry (REGISTRY stands for yours)"
HELM = "needs helm and a real cluster"

# Cannot run on the build machine, and why.
ELSEWHERE = {
    "make run": QUICKSTART,
    "make test": QUICKSTART,
    "make image && make image VARIANT=host": IMAGE,
    "make image": IMAGE,
    "make image VARIANT=host": IMAGE,
    "skopeo copy oci-archive:build/image/ccltune-0.1.0.oci.tar docker://REGISTRY/ccltune:0.1.0":
        REGISTRY,
    "skopeo copy oci-archive:build/image/ccltune-0.1.0-cuda.oci.tar "
    "docker://REGISTRY/ccltune:0.1.0-cuda": REGISTRY,
    "docker build -f manifests/image/Containerfile -t ghcr.io/ccltune/ccltune:0.1.0 .": DOCKER,
    "docker build -f manifests/image/Containerfile --target cuda -t "
    "ghcr.io/ccltune/ccltune:0.1.0-cuda .": DOCKER,
    "docker run --rm ghcr.io/ccltune/ccltune:0.1.0 tune --ranks 2 --backend host": DOCKER,
    "helm install ccltune charts/ccltune -n ccltune-system --create-namespace": HELM,
    "helm install ccltune charts/ccltune -n ccltune-system --create-namespace "
    "--set webhook.enabled=true": HELM,
    "helm upgrade ccltune charts/ccltune -n ccltune-system --reuse-values "
    "--set webhook.enabled=true": HELM,
    "helm upgrade --install ccltune charts/ccltune -n ccltune-system "
    "--set metrics.pushgateway.enabled=true,metrics.serviceMonitor.enabled=true": HELM,
    "kubectl get ctj -w": "watches until interrupted (the same list once: kubectl get ctj)",
    "kubectl -n team-a get pod POD -o jsonpath='{.metadata.annotations.ccltune\\.io/injected}'":
        "POD stands for a pod the webhook injected, which needs the controller running in a "
        "cluster",
    "ccltune tune --op allReduce,allGather,reduceScatter --dtypes bf16 --sizes 1KiB:256MiB:2": GPU,
    "ccltune tune --op allReduce --dtypes bf16 --sizes 1KiB:64MiB:4 --cuda-graph -v": GPU,
    "ccltune tune --epilogue residualRmsNorm,hidden=4096 --tokens 1,8,32,128":
        GPU + "; epilogues are tuned on it only",
    "ccltune results --epilogue residualRmsNorm,hidden=4096":
        "reads epilogue records, which only a tune on GPUs writes",
    "LD_PRELOAD=/usr/local/lib/libccltune-nccl.so CCLTUNE_RESULTS_FILE=winners.json "
    "torchrun --nproc-per-node 8 train.py": "needs 8 GPUs, PyTorch and your train.py",
    "LD_PRELOAD=/usr/local/lib/libccltune-nccl.so "
    "CCLTUNE_REDIS_URL=redis://ccltune-redis.ccltune-system:6379/0 "
    "./build/all_reduce_perf -b 1K -e 64M -f 2 -g 1":
        "needs a GPU, nccl-tests and a cluster's Redis",
    "ccltune check-nccl /usr/local/lib/libccltune-nccl.so --world 8":
        "runs in the cuda image, where the library lies at that path",
}

# What a page's commands assume beyond the quickstart, run first (each must exit 0).
DEPLOY_INSTALL = [
    "kubectl apply -k manifests/",
    "kubectl wait --for condition=established crd/collectivetuningjobs.ccltune.io",
    "kubectl -n ccltune-system create secret generic ccltune-redis --from-literal=password=x "
    "--from-literal=reader-password=r --from-literal=telemetry-password=t",
]
GIVEN = {
    # inject.md opts a namespace of yours in, on a cluster where deploy.md's install ran.
    "docs/inject.md": DEPLOY_INSTALL + ["kubectl create namespace team-a"],
}

PAGE_TIMEOUT_S = 240


class Command:
    def __init__(self, page, line, text, console_output=()):
        self.page, self.line, self.text = page, line, text
        self.key = key_of(text)
        self.expect = [o for o in console_output if o.strip() and o.strip() != "..."]

    def where(self):
        return "%s:%d" % (self.page, self.line)


def strip_comment(line):
    """The line without its shell comment (a "#" outside quotes, at a word's start)."""
    quote, prev = None, " "
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and prev.isspace():
            return line[:i]
        prev = c
    return line


def key_of(text):
    """A command as the tables name it: comments dropped, whitespace collapsed, continuations
    joined."""
    joined = " ".join(strip_comment(part).rstrip().rstrip("\\") for part in text.split("\n"))
    return " ".join(joined.split())


def fenced_blocks(text):
    """(language, first body line number, body lines) of every fenced block."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.groups()
        j = i + 1
        while j < len(lines) and not re.match(r"^\s*%s\s*$" % re.escape(fence), lines[j]):
            j += 1
        body = [line[len(indent):] if line.startswith(indent) else line.lstrip()
                for line in lines[i + 1:j]]
        yield lang, i + 2, body
        i = j + 1


def commands_of(page, text):
    """The commands of one page, in order."""
    out = []
    for lang, first, body in fenced_blocks(text):
        if lang not in LANGS:
            continue
        k = 0
        while k < len(body):
            line = body[k]
            if lang == "console" and not line.startswith("$ "):
                k += 1
                continue
            start = k
            if lang == "console":
                line = line[2:]
            if not strip_comment(line).strip():
                k += 1
                continue
            parts = [line]
            while strip_comment(parts[-1]).rstrip().endswith("\\") and k + 1 < len(body):
                k += 1
                parts.append(body[k])
            k += 1
            output = []
            if lang == "console":
                while k < len(body) and not body[k].startswith("$ "):
                    output.append(body[k])
                    k += 1
            out.append(Command(page, first + start, "\n".join(parts), output))
    return out


def pages_of(root):
    pages = [os.path.join(root, "README.md")]
    pages += sorted(glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))
    return pages


def all_commands(root):
    cmds = []
    for path in pages_of(root):
        with open(path, encoding="utf-8") as f:
            cmds += commands_of(os.path.relpath(path, root), f.read())
    return cmds


def classify(cmds, here=HERE, elsewhere=ELSEWHERE):
    """Errors: commands in neither table or both, and table entries no page writes."""
    errors = []
    for c in cmds:
        if c.key in here and c.key in elsewhere:
            errors.append("%s: %r is in both HERE and ELSEWHERE" % (c.where(), c.key))
        elif c.key not in here and c.key not in elsewhere:
            errors.append("%s: a new command, in neither HERE (runs on the build machine) nor "
                          "ELSEWHERE (with why not) of tests/readme/docs_commands.py: %r" % (
                              c.where(), c.key))
    written = {c.key for c in cmds}
    for table, name in ((here, "HERE"), (elsewhere, "ELSEWHERE")):
        for key in sorted(set(table) - written):
            errors.append("%s names %r, which no page writes any more" % (name, key))
    return errors


class Sandbox:
    """The quickstart's state, copied: the source tree, `build` pointing at the build tree,
    a cache holding `make run`'s winners."""

    def __init__(self, root, build, bindir=None):
        self.root, self.build = os.path.abspath(root), os.path.abspath(build)
        self.bindir = os.path.abspath(bindir or os.path.join(self.build, "worker"))
        self.dir = tempfile.mkdtemp(prefix="docs-commands-")
        self.tree = os.path.join(self.dir, "tree")
        shutil.copytree(self.root, self.tree, symlinks=True, ignore=self._ignore)
        os.symlink(self.build, os.path.join(self.tree, "build"))
        self.seed = os.path.join(self.dir, "seed-cache")

    def _ignore(self, folder, names):
        if os.path.abspath(folder) == self.root:
            return {n for n in names if n == ".git" or n.startswith("build")
                    or os.path.join(self.root, n) == self.build}
        return set()

    def env(self, name):
        home = os.path.join(self.dir, name, "home")
        os.makedirs(home, exist_ok=True)
        return {
            "PATH": self.bindir + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": home,
            "CCLTUNE_CACHE_DIR": os.path.join(self.dir, name, "cache"),
            "TMPDIR": os.path.join(self.dir, name),
            "LANG": "C.UTF-8",
        }

    def seed_cache(self):
        env = self.env("seed")
        env["CCLTUNE_CACHE_DIR"] = self.seed
        t0 = time.time()
        r = subprocess.run(QUICKSTART_TUNE, shell=True, cwd=self.tree, env=env,
                           capture_output=True, text=True, timeout=PAGE_TIMEOUT_S,
                           stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            raise RuntimeError("the quickstart's tune (%s) failed, exit %d:\n%s%s" % (
                QUICKSTART_TUNE, r.returncode, r.stdout[-3000:], r.stderr[-3000:]))
        return time.time() - t0

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def start_simulator():
    sys.path.insert(0, os.path.join(REPO, "tests", "k8s", "sim"))
    from simfixture import Simulator  # noqa: E402
    return Simulator().start()


def shell_script(given, cmds, outdir):
    """One bash for the page, so that a variable or function a command defines reaches the next;
    each command's output to its own file, its exit status and times to the file `status`."""
    st = "%s/status" % outdir
    lines = ["exec </dev/null"]
    for i, g in enumerate(given):
        lines += ["{ %s\n} >%s/given-%d.out 2>&1 || { echo \"@@ given %d $?\" >>%s; exit 90; }" % (
            g, outdir, i, i, st)]
    for i, c in enumerate(cmds):
        lines += ['printf "@@ start %d %%s\\n" "$EPOCHREALTIME" >>%s' % (i, st),
                  "{ %s\n} >%s/%d.out 2>&1" % (c.text, outdir, i),
                  'printf "@@ rc %d %%d %%s\\n" "$?" "$EPOCHREALTIME" >>%s' % (i, st)]
    return "\n".join(lines) + "\n"


def run_page(sandbox, page, cmds):
    """Runs one page's HERE commands; returns {index: (exit code or None, seconds, output)}."""
    name = re.sub(r"[^\w]+", "-", page)
    env = sandbox.env(name)
    shutil.copytree(sandbox.seed, env["CCLTUNE_CACHE_DIR"])
    outdir = os.path.join(sandbox.dir, name, "out")
    os.makedirs(outdir)
    given = GIVEN.get(page, [])
    sim = None
    if any(c.key.startswith("kubectl") for c in cmds) or given:
        sim = start_simulator()
        env["KUBECONFIG"] = sim.kubeconfig
    proc = subprocess.Popen(["bash", "-c", shell_script(given, cmds, outdir)], cwd=sandbox.tree,
                            env=env, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        proc.wait(timeout=PAGE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if sim:
            sim.stop()
    status = ""
    if os.path.exists(os.path.join(outdir, "status")):
        with open(os.path.join(outdir, "status")) as f:
            status = f.read()
    results, started = {}, {}
    for line in status.split("\n"):
        p = line.split()
        if line.startswith("@@ given"):
            with open(os.path.join(outdir, "given-%s.out" % p[2])) as f:
                raise RuntimeError("%s: what the page assumes (%s) failed, exit %s:\n%s" % (
                    page, given[int(p[2])], p[3], f.read()[-2000:]))
        if line.startswith("@@ start"):
            started[int(p[2])] = float(p[3])
        elif line.startswith("@@ rc"):
            i = int(p[2])
            with open(os.path.join(outdir, "%d.out" % i), errors="replace") as f:
                results[i] = (int(p[3]), float(p[4]) - started[i], f.read())
    for i in range(len(cmds)):
        if i not in results and i in started:
            results[i] = (None, time.time() - started[i], "(killed after %d s)" % PAGE_TIMEOUT_S)
    return results


def check_result(cmd, result):
    """Errors of one command that ran."""
    if result is None:
        return ["%s: did not run (an earlier command of the page hung): %s" % (cmd.where(),
                                                                            cmd.key)]
    rc, _, out = result
    if rc != 0:
        return ["%s: exit %s: %s\n%s" % (cmd.where(), rc, cmd.key, indent(out[-3000:]))]
    missing = [e for e in cmd.expect if e.strip() not in out]
    if missing:
        return ["%s: prints no line %r, which the page shows: %s\n%s" % (
            cmd.where(), missing[0].strip(), cmd.key, indent(out[-3000:]))]
    return []


def indent(text):
    return "\n".join("    " + line for line in text.rstrip().split("\n"))


def os_name():
    try:
        with open("/etc/os-release") as f:
            return re.search(r'^PRETTY_NAME="?([^"\n]*)', f.read(), re.M).group(1)
    except (OSError, AttributeError):
        return "an unnamed system"


def report(path, cmds, results, failed, seed_s, argv):
    rows = []
    for c in cmds:
        if c.key in HERE:
            rc, secs, _ = results.get(id(c)) or (None, 0, "")
            what = "ran: exit %s, %.1f s" % (rc, secs) if rc is not None else "did not finish"
            what += ", FAILED" if id(c) in failed else ""
        else:
            what = "not run: " + ELSEWHERE.get(c.key, "in neither table")
        rows.append("| %s:%d | `%s` | %s |" % (c.page, c.line, c.key.replace("|", "\\|"), what))
    ran = sum(1 for c in cmds if c.key in HERE)
    text = """# The documentation's commands, run as written

Produced by this command (ctest `docs_commands` runs the same) on %s, on %s with %d cores:

    %s

Each page started from the quickstart's state: the build tree, and the winners of `make run`'s
tuning job (`%s`, %.1f s here) in a private cache, copied per page; `ccltune` on PATH; a
temporary HOME. kubectl ran against the API-server simulator of `tests/k8s/sim`.

%d commands on the pages: %d ran, of which %d failed; %d are listed with why they cannot run
on this machine (`ELSEWHERE` in `tests/readme/docs_commands.py`).

| page:line | command | result |
|---|---|---|
%s
""" % (datetime.date.today().isoformat(), os_name(), os.cpu_count(), " ".join(argv),
       QUICKSTART_TUNE, seed_s, len(cmds), ran, len(failed), len(cmds) - ran, "\n".join(rows))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", required=True,
                   help="the build tree (`make run`'s or `make test`'s)")
    p.add_argument("--bindir", help="the folder holding `ccltune` (default: BUILD/worker)")
    p.add_argument("--root", default=REPO, help="the repository (default: this one)")
    p.add_argument("--report", help="write what ran and what did not to this Markdown file")
    p.add_argument("--list", action="store_true", help="only list and classify the commands")
    args = p.parse_args()
    cmds = all_commands(args.root)
    errors = classify(cmds)
    for e in errors:
        print("FAIL: " + e)
    if errors or args.list:
        for c in cmds:
            print("%-28s %-9s %s" % (c.where(), "here" if c.key in HERE else "elsewhere", c.key))
        return 1 if errors else 0
    bindir = args.bindir or os.path.join(args.build, "worker")
    if not os.access(os.path.join(bindir, "ccltune"), os.X_OK):
        print("FAIL: no %s/ccltune: build it first (make run)" % bindir)
        return 1
    sandbox = Sandbox(args.root, args.build, bindir)
    results, failures, failed = {}, [], set()
    try:
        seed_s = sandbox.seed_cache()
        print("quickstart state: %s, %.1f s" % (QUICKSTART_TUNE, seed_s))
        by_page = {}
        for c in cmds:
            if c.key in HERE:
                by_page.setdefault(c.page, []).append(c)
        for page, pcmds in by_page.items():
            t0 = time.time()
            got = run_page(sandbox, page, pcmds)
            for i, c in enumerate(pcmds):
                results[id(c)] = got.get(i)
                errs = check_result(c, got.get(i))
                failures += errs
                if errs:
                    failed.add(id(c))
                print("%s %s: %s" % ("FAIL" if errs else "ok  ", c.where(), c.key))
            print("  %s: %d commands, %.1f s" % (page, len(pcmds), time.time() - t0))
    finally:
        sandbox.close()
    for c in cmds:
        if c.key not in HERE:
            print("not run %s: %s (%s)" % (c.where(), c.key, ELSEWHERE[c.key]))
    if args.report:
        shown = ["python3", "tests/readme/docs_commands.py", "--build",
                 os.path.relpath(os.path.abspath(args.build), os.path.abspath(args.root)),
                 "--report", os.path.relpath(os.path.abspath(args.report),
                                             os.path.abspath(args.root))]
        report(args.report, cmds, results, failed, seed_s, shown)
    for f in failures:
        print("FAIL: " + f)
    ran = sum(1 for c in cmds if c.key in HERE)
    if failures:
        print("FAILED: %d of %d commands that run here failed" % (len(failures), ran))
        return 1
    print("PASSED: %d commands ran as written; %d listed with why they cannot run here" % (
        ran, len(cmds) - ran))
    return 0


if __name__ == "__main__":
    sys.exit(main())

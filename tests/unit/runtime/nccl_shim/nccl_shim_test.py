#!/usr/bin/env python3
"""libccltune-nccl without a GPU (issue 22): a fake NCCL records every call; programs linked
against it run with the shim preloaded.

  nccl_shim_test.py SHIM FAKE_DIR CALLER SCENARIOS NCCL_H CCLTUNE LAYER_FLIP LAYER_TWICE

Across nodes (issue 33): before the first init reaches NCCL, CCLTUNE_NODE_NAME becomes
NCCL_HOSTID when that is unset (never overwritten, never with CCLTUNE_NCCL=off), and an
nccl-net winner's settings are set unless the environment holds them; check-nccl shows the
node, the node count and what each tuned size runs.

Checks: every function of nccl.h is exported (the list read from the header here, by another
reading than the build's generator) and nothing else of NCCL's names; the shim needs neither
NCCL nor a shared cudart; every call reaches the fake with every byte of the caller's
arguments; in every case (CASES) the fake gets exactly the calls it gets without the shim, in
the same order, each once, plus the shim's own calls the case names with their reason; calls
in groups, on non-blocking communicators, of types and ops not tuned, and every call under
CCLTUNE_NCCL=off or against an NCCL of another version are forwarded, each with its reason;
a missing real NCCL is one clear line; `ccltune check-nccl` reports the NCCL, the fingerprint
and the winners it would load. Negative tests: two broken layers (one flips a byte of an
ncclUniqueId, one forwards ncclAllReduce twice) must fail the call checks. Every run has a
deadline.
"""
import collections
import os
import re
import struct
import subprocess
import sys
import tempfile
import unittest

SHIM, FAKE_DIR, CALLER, SCENARIOS, NCCL_H, CCLTUNE, LAYER_FLIP, LAYER_TWICE = sys.argv[1:9]
DEADLINE_S = 60
# What NCCL reads once per process, at its first init (the fake writes them then).
NCCL_ONCE = ("NCCL_HOSTID", "NCCL_SOCKET_NTHREADS", "NCCL_NSOCKS_PERTHREAD", "NCCL_BUFFSIZE",
             "NCCL_IB_QPS_PER_CONNECTION")


def header_functions():
    """Names of the header's functions: identifiers called like functions outside macros."""
    with open(NCCL_H) as fh:
        text = fh.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = "\n".join(l for l in text.split("\n") if not l.lstrip().startswith("#"))
    text = re.sub(r"//[^\n]*", " ", text)
    names = set(re.findall(r"\b(p?nccl[A-Z][A-Za-z0-9_]*)\s*\(", text))
    return names


def run(args, env_extra=None, log=None):
    env = dict(os.environ)
    for k in ("CCLTUNE_NCCL", "CCLTUNE_NCCL_DEBUG", "CCLTUNE_RESULTS_FILE", "CCLTUNE_REDIS_URL",
              "CCLTUNE_NCCL_LIBRARY", "FAKE_NCCL_VERSION", "CCLTUNE_LOG", "LD_PRELOAD",
              "CCLTUNE_FINGERPRINT", "CCLTUNE_NODE_NAME", "CCLTUNE_DIRECT",
              "TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK") + NCCL_ONCE:
        env.pop(k, None)
    env["LD_LIBRARY_PATH"] = FAKE_DIR
    if log is not None:
        env["FAKE_NCCL_LOG"] = log
    env.update(env_extra or {})
    # Address randomisation off: the fake logs pointer arguments, compared across runs.
    args = ["setarch", os.uname().machine, "-R"] + list(args)
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=DEADLINE_S)


def fake_log(path):
    if not os.path.exists(path):
        return []
    with open(path) as fh:
        return fh.read().splitlines()


# --- What a layer may add to the application's calls, and the check of a whole call log ---
#
# The fake records each call with every byte of its arguments (gen_fake_nccl.py). A layer
# preloaded in front of it must pass the application's calls through exactly: the same calls,
# in the same order, each once, each with the same bytes. The only other calls allowed are
# the layer's own, each named by a case with where it comes and why (OwnCall); their
# pointer arguments point into the layer's stack, so they are matched by a pattern.

ADDR = r"[0-9a-f]{16}"
FIRST = None  # an own call before the application's first call


def comm_hex(k):
    """The fake's k-th communicator (0x10000 + k), as its record writes a handle."""
    return struct.pack("<Q", 0x10000 + k).hex()


OwnCall = collections.namedtuple("OwnCall", "before pattern why")


def version_check():
    return OwnCall(FIRST, r"ncclGetVersion version=%s" % ADDR,
                   "the shim compares the real NCCL's version with its header's at its first call")


def user_rank(before, k, why):
    return OwnCall(before, r"ncclCommUserRank comm=%s rank=%s" % (comm_hex(k), ADDR), why)


def expected_calls(plain, own):
    """The application's calls (exact lines) with the layer's own calls (patterns) put in:
    each before the first application call after the previous one that matches its `before`."""
    out = [(line, False) for line in plain]
    at = 0
    for call in own:
        if call.before is FIRST:
            i = 0
        else:
            i = next((k for k in range(at, len(out))
                      if not out[k][1] and re.match(call.before, out[k][0])), None)
            if i is None:
                raise AssertionError("case error: no application call matches %r" % call.before)
        out.insert(i, (call.pattern, True))
        at = i + 1
    return out


def first_difference(want, got):
    """Names the first argument where two records of a call differ, and its first byte that
    differs (an argument's value is hex, two digits a byte)."""
    for w, g in zip(want.split(" "), got.split(" ")):
        if w != g:
            name, wv, gv = w.split("=")[0], w.partition("=")[2], g.partition("=")[2]
            i = next((i for i, (x, y) in enumerate(zip(wv, gv)) if x != y), min(len(wv), len(gv)))
            byte = i // 2
            return "%s differs at byte %d: expected %s, got %s" % (
                name, byte, wv[2 * byte:2 * byte + 2] or "end", gv[2 * byte:2 * byte + 2] or "end")
    return "expected %d arguments, got %d" % (len(want.split(" ")), len(got.split(" ")))


def call_differences(plain, layered, own):
    """[] when `layered` is exactly `plain` plus the `own` calls; else what differs first (after
    it, the two logs are shifted) and the counts."""
    want = expected_calls(plain, own)
    for k in range(max(len(want), len(layered))):
        w = want[k] if k < len(want) else None
        g = layered[k] if k < len(layered) else None
        if w is not None and g is not None and (re.fullmatch(w[0], g) if w[1] else w[0] == g):
            continue
        if w is None:
            return ["call %d: an extra call %s; %d calls expected, %d made" %
                    (k, g[:120], len(want), len(layered))]
        if g is None:
            return ["call %d: %s never came; %d calls expected, %d made" %
                    (k, w[0][:120], len(want), len(layered))]
        what = ("an own call %s" % w[0][:120] if w[1] or g.split(" ")[0] != w[0].split(" ")[0]
                else first_difference(w[0], g))
        return ["call %d (%s): %s; got %s; %d calls expected, %d made" %
                (k, g.split(" ")[0], what, g[:120], len(want), len(layered))]
    return []


# Every scenario a layer is run on: shim_scenarios.c's SCENARIO, the environment, and the
# shim's own calls in it. To add a case: a scenario in shim_scenarios.c and a row here.
Case = collections.namedtuple("Case", "name program env own")
CONTEXT_TRIED = "the first eligible call tries a context: the communicator's rank decides who logs"
NO_CONTEXT_YET = "released before any context was tried: the summary line needs its rank"
# The runtime's own queries while it makes a context (runtime/init.cc): rank, size, device,
# the NCCL version it runs against; it fails here (no winner for this world), so no split.
RUNTIME_INIT = [r"ncclCommUserRank comm=%s rank=%s" % (comm_hex(0), ADDR),
                r"ncclCommCount comm=%s count=%s" % (comm_hex(0), ADDR),
                r"ncclCommUserRank comm=%s rank=%s" % (comm_hex(0), ADDR),
                r"ncclCommCuDevice comm=%s device=%s" % (comm_hex(0), ADDR),
                r"ncclGetVersion version=%s" % ADDR]
CASES = {c.name: c for c in [
    Case("forwarding", ["forwarding"], {"CCLTUNE_NCCL_DEBUG": "1"},
         [version_check(),
          user_rank(r"ncclAllReduce ", 0, CONTEXT_TRIED),
          user_rank(r"ncclCommDestroy comm=%s" % comm_hex(1), 1, NO_CONTEXT_YET)]),
    Case("failed-context", ["forwarding"], {"CCLTUNE_RESULTS_FILE": "@EMPTY_RESULTS@"},
         [version_check()] +
         [OwnCall(r"ncclAllReduce ", p, "libccltune's init on the first eligible call")
          for p in RUNTIME_INIT] +
         [user_rank(r"ncclCommDestroy comm=%s" % comm_hex(1), 1, NO_CONTEXT_YET)]),
    Case("off", ["forwarding"], {"CCLTUNE_NCCL": "off", "CCLTUNE_NCCL_DEBUG": "1"},
         [version_check()]),
    Case("bad-switch", ["forwarding"], {"CCLTUNE_NCCL": "yes"}, [version_check()]),
    Case("other-version", ["forwarding"],
         {"FAKE_NCCL_VERSION": "22705", "CCLTUNE_NCCL_DEBUG": "1"}, [version_check()]),
    Case("lifecycle", ["lifecycle"], {"CCLTUNE_NCCL_DEBUG": "1"},
         [version_check(),
          user_rank(r"ncclCommFinalize comm=%s" % comm_hex(1), 1, NO_CONTEXT_YET),
          user_rank(r"ncclCommAbort comm=%s" % comm_hex(2), 2, NO_CONTEXT_YET),
          user_rank(r"ncclCommDestroy comm=%s" % comm_hex(0), 0, NO_CONTEXT_YET)]),
    Case("every-function", [], {}, [version_check()]),
    # The group of one call per communicator: the shim asks each communicator's size and rank
    # once (is every rank in the group?), then tries the four contexts in parallel, one
    # thread each (the order of those four rank queries is the threads'), and forwards.
    Case("one-process", ["one-process"], {"CCLTUNE_NCCL_DEBUG": "1"},
         [version_check()] +
         [OwnCall(r"ncclAllReduce ", p, "is the group one call for every rank?")
          for k in range(4)
          for p in (r"ncclCommCount comm=%s count=%s" % (comm_hex(k), ADDR),
                    r"ncclCommUserRank comm=%s rank=%s" % (comm_hex(k), ADDR))] +
         [OwnCall(r"ncclAllReduce ", r"ncclCommUserRank comm=(%s) rank=%s"
                  % ("|".join(comm_hex(k) for k in range(4)), ADDR),
                  "a context tried per communicator, in parallel") for _ in range(4)]),
]}


def run_case(case, layer=SHIM):
    """(plain run, its call log, run with `layer` preloaded, its call log)."""
    program = [CALLER] if case.name == "every-function" else [SCENARIOS] + case.program
    with tempfile.TemporaryDirectory() as d:
        env = dict(case.env)
        if env.get("CCLTUNE_RESULTS_FILE") == "@EMPTY_RESULTS@":
            env["CCLTUNE_RESULTS_FILE"] = os.path.join(d, "empty.json")
            with open(env["CCLTUNE_RESULTS_FILE"], "w") as f:
                f.write("[]")
        plain = run(program, log=os.path.join(d, "plain"))
        layered = run(program, dict(env, LD_PRELOAD=layer), log=os.path.join(d, "layered"))
        return (plain, fake_log(os.path.join(d, "plain")), layered,
                fake_log(os.path.join(d, "layered")))


class EveryCall(unittest.TestCase):
    def test_each_function_reaches_the_fake_with_the_callers_arguments(self):
        n = len(header_functions())
        plain, plain_log, shimmed, shim_log = run_case(CASES["every-function"])
        self.assertEqual(plain.returncode, 0, plain.stdout + plain.stderr)
        self.assertEqual(shimmed.returncode, 0, shimmed.stdout + shimmed.stderr)
        self.assertIn("%d functions called, 0 mismatches" % n, shimmed.stdout)
        self.assertEqual(len(plain_log), n)
        self.assertEqual(call_differences(plain_log, shim_log, CASES["every-function"].own), [])


class CallLogs(unittest.TestCase):
    def test_every_case_makes_exactly_the_applications_calls_and_the_shims_own(self):
        for case in CASES.values():
            with self.subTest(case=case.name):
                plain, plain_log, _, shim_log = run_case(case)
                self.assertEqual(plain.returncode, 0, plain.stdout + plain.stderr)
                self.assertGreater(len(plain_log), 0)
                self.assertEqual(call_differences(plain_log, shim_log, case.own), [])


class BrokenLayers(unittest.TestCase):
    """The checks above must fail on a layer that changes a call: kept as negative tests."""

    def check_fails(self, layer, case, problem):
        """The call-log check of `case` with `layer` preloaded must report `problem` (a regex)."""
        _, plain_log, out, layered_log = run_case(CASES[case], layer)
        problems = call_differences(plain_log, layered_log, [])
        self.assertEqual(len(problems), 1, "the call-log check missed it")
        self.assertRegex(problems[0], problem)
        return out

    def test_a_flipped_byte_of_a_unique_id_is_caught(self):
        # Both init calls pass an id; the first in each program is the one reported.
        flipped = r"commId differs at byte 100: expected (..), got (?!\1)..; .* (\d+) calls " \
                  r"expected, \2 made"
        self.check_fails(LAYER_FLIP, "forwarding", r"^call 1 \(ncclCommInitRank\): " + flipped)
        out = self.check_fails(LAYER_FLIP, "every-function",
                               r"^call \d+ \(ncclCommInitRankConfig\): " + flipped)
        self.assertEqual(out.returncode, 1, out.stdout)
        self.assertIn("MISMATCH ncclCommInitRank:", out.stdout)
        self.assertIn("MISMATCH ncclCommInitRankConfig:", out.stdout)

    def test_a_call_forwarded_twice_is_caught(self):
        # The second copy arrives where the application's next call should: one call too many.
        for case in ("forwarding", "every-function"):
            with self.subTest(case=case):
                self.check_fails(LAYER_TWICE, case,
                                 r"^call \d+ \(ncclAllReduce\): an own call .* (\d+) calls "
                                 r"expected, (?!\1)\d+ made$")


class Forwarding(unittest.TestCase):
    """What the shim says about the calls of each case (CallLogs checks the calls)."""

    def test_one_process_groups_are_held_and_forwarded_whole_and_destroy_waits_for_no_peer(self):
        _, plain_log, out, layered_log = run_case(CASES["one-process"])
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        err = out.stderr
        self.assertEqual(err.count("-> NCCL (in a group: no context)"), 4, err)
        self.assertEqual(err.count("-> NCCL (in a group: several calls on one communicator)"), 2,
                         err)
        # Every forwarded call of a group reaches NCCL between its start and its end.
        ends = [i for i, l in enumerate(layered_log) if l.startswith("ncclGroupEnd")]
        ars = [i for i, l in enumerate(layered_log) if l.startswith("ncclAllReduce ")]
        self.assertEqual(len(ends), 2, layered_log)
        self.assertTrue(all(i < ends[0] for i in ars[:4]) and ends[0] < ars[4] < ends[1])
        took = float(re.search(r"one after another in ([0-9.]+) s", out.stdout).group(1))
        self.assertLess(took, 2.0, "sequential destroy waited (for peers that come later)")

    def test_ineligible_calls_are_forwarded_with_their_reason(self):
        _, _, out, _ = run_case(CASES["forwarding"])
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        err = out.stderr
        self.assertRegex(err, r"plain NCCL: no winners source \(set CCLTUNE_RESULTS_FILE")
        self.assertEqual(err.count("-> NCCL (in a group: different collectives)"), 2, err)
        self.assertEqual(err.count("-> NCCL (type or op not tuned)"), 2, err)
        self.assertEqual(err.count("-> NCCL (non-blocking communicator)"), 1, err)
        self.assertEqual(err.count("-> NCCL (empty)"), 1, err)
        self.assertEqual(err.count("-> NCCL (no context: no winners source"), 1, err)
        self.assertRegex(err, r"destroyed: 0 calls served by winners, 6 forwarded \(in a group 2, "
                              r"type or op not tuned 2, empty 1, no context 1\)")
        self.assertRegex(err, r"destroyed: 0 calls served by winners, 1 forwarded "
                              r"\(non-blocking communicator 1\)")
        self.assertNotIn("ncclBroadcast", err)  # not ccltune's: forwarded without a word

    def test_a_failed_context_is_one_line_and_plain_nccl(self):
        _, _, out, _ = run_case(CASES["failed-context"])
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertEqual(len(re.findall(r"plain NCCL: libccltune init failed", out.stderr)), 1,
                         out.stderr)

    def test_off_forwards_everything_silently(self):
        _, _, out, _ = run_case(CASES["off"])
        self.assertEqual(out.returncode, 0)
        self.assertEqual(out.stderr, "")

    def test_a_bad_switch_value_is_one_line_naming_it(self):
        _, _, out, _ = run_case(CASES["bad-switch"])
        self.assertEqual(out.returncode, 0)
        self.assertEqual(out.stderr.strip().splitlines(),
                         ["ccltune-nccl: CCLTUNE_NCCL: 'yes' is not one of on, off: forwarding "
                          "every call"])

    def test_another_nccl_version_is_forwarded_with_one_line(self):
        _, _, out, _ = run_case(CASES["other-version"])
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        lines = out.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, out.stderr)
        self.assertRegex(lines[0], r"is NCCL 22705, built against 2\.\d+: forwarding every call")

    def test_split_children_and_teardown(self):
        _, _, out, _ = run_case(CASES["lifecycle"])
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertEqual(out.stderr.count("-> NCCL (non-blocking communicator)"), 1, out.stderr)
        self.assertRegex(out.stderr, r"aborted: 0 calls served by winners, 1 forwarded")
        self.assertEqual(len(re.findall(r"destroyed: 0 calls", out.stderr)), 2, out.stderr)


def record(bytes_, winner, times, world=4, op="allReduce", dtype="bf16", redop="sum"):
    """A published record (schema 1) of `world` ranks: by default bf16 sum allReduce of
    `bytes_`, the `times` {choice: us} measured, `winner` won."""
    choices = [{"name": n, "params": {}, "timeUs": t, "minUs": t, "maxUs": t, "status": "ok",
                "busbwGBs": 1.0} for n, t in times.items()]
    return {"schema": 1, "fingerprint": "shim-test", "op": op, "dtype": dtype,
            "redop": redop, "bytes": bytes_, "winner": winner, "winnerParams": {},
            "timeUs": times[winner], "defaultTimeUs": times["nccl"],
            "speedupVsDefault": times["nccl"] / times[winner], "busbwGBs": 1.0,
            "choices": choices, "worldSize": world, "tunedAt": "2026-11-25T08:00:00Z",
            "jobId": "j", "attempt": 0, "toolVersion": "0.1.0"}


SOCKETS = "nccl-net:socketThreads=4,socksPerThread=4"
# Two emulated nodes of 2 GPUs (docs/design.md §6's figures, µs): NCCL's own at 8 KiB, more sockets
# at 64 MiB, rs+ag at 1 MiB, a forced protocol (the tuner plugin's) at 4 KiB.
NODES_SWEEP = [
    record(8192, "nccl", {"nccl": 75.6, SOCKETS: 134.0}),
    record(1 << 20, "rs+ag", {"nccl": 457.0, "rs+ag": 400.0}),
    record(64 << 20, SOCKETS, {"nccl": 22186.0, SOCKETS: 4736.0}),
    record(4096, "nccl:algo=tree,proto=ll", {"nccl": 70.0, "nccl:algo=tree,proto=ll": 61.7}),
]


def with_winners(records, fn):
    import json
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(records, f)
        f.flush()
        return fn({"CCLTUNE_RESULTS_FILE": f.name, "CCLTUNE_FINGERPRINT": "shim-test"})


class FirstInit(unittest.TestCase):
    """What the real NCCL reads at its first init, with and without the shim in front."""

    def first_init_env(self, env, preload=True):
        """(NAME -> value or None) the fake read at the first init of `forwarding`, stderr."""
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "env")
            extra = dict(env, FAKE_NCCL_ENV_LOG=log)
            if preload:
                extra["LD_PRELOAD"] = SHIM
            out = run([SCENARIOS, "forwarding"], extra)
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            seen = {}
            for line in fake_log(log):
                name, eq, value = line.partition("=")
                seen[line.split(" ")[0] if not eq else name] = value if eq else None
            self.assertEqual(sorted(seen), sorted(NCCL_ONCE), fake_log(log))
            return seen, out.stderr

    def test_the_node_name_becomes_nccl_hostid_before_nccl_reads_it(self):
        seen, err = self.first_init_env({"CCLTUNE_NODE_NAME": "node-a"})
        self.assertEqual(seen["NCCL_HOSTID"], "node-a")
        self.assertIn("before NCCL's first init: NCCL_HOSTID='node-a' set from CCLTUNE_NODE_NAME",
                      err)
        # Without the shim, or with it off, NCCL sees no host id: the pod's host name counts.
        seen, _ = self.first_init_env({"CCLTUNE_NODE_NAME": "node-a"}, preload=False)
        self.assertIsNone(seen["NCCL_HOSTID"])
        seen, err = self.first_init_env({"CCLTUNE_NODE_NAME": "node-a", "CCLTUNE_NCCL": "off"})
        self.assertIsNone(seen["NCCL_HOSTID"])
        self.assertEqual(err, "")

    def test_a_conflicting_nccl_hostid_is_kept_and_named_once(self):
        seen, err = self.first_init_env({"CCLTUNE_NODE_NAME": "node-a", "NCCL_HOSTID": "node-b"})
        self.assertEqual(seen["NCCL_HOSTID"], "node-b")
        self.assertEqual(len(re.findall(r"NCCL_HOSTID='node-b' differs from "
                                        r"CCLTUNE_NODE_NAME='node-a'", err)), 1, err)

    def test_an_nccl_net_winner_sets_its_settings_before_nccl_reads_them(self):
        # `forwarding` makes a 1-rank communicator first: the winners of 1 rank apply.
        one_rank = [dict(r, worldSize=1) for r in NODES_SWEEP]
        seen, err = with_winners(one_rank, self.first_init_env)
        self.assertEqual((seen["NCCL_SOCKET_NTHREADS"], seen["NCCL_NSOCKS_PERTHREAD"]), ("4", "4"))
        self.assertIsNone(seen["NCCL_BUFFSIZE"])
        self.assertIn("network settings: %s (won 1 of 4 problems of 1 ranks, fingerprint "
                      "shim-test); set NCCL_SOCKET_NTHREADS=4 NCCL_NSOCKS_PERTHREAD=4" % SOCKETS,
                      err)
        # A value the environment holds is the user's: kept, and then none of the setting is
        # set (half of it next to the user's value was never measured).
        seen, err = with_winners(one_rank, lambda e: self.first_init_env(
            dict(e, NCCL_SOCKET_NTHREADS="8")))
        self.assertEqual((seen["NCCL_SOCKET_NTHREADS"], seen["NCCL_NSOCKS_PERTHREAD"]), ("8", None))
        self.assertIn("none set: the environment holds NCCL_SOCKET_NTHREADS=8 (a setting applies "
                      "whole)", err)
        # Switched off: NCCL's own, said once; a bad value is named and sets nothing either.
        seen, err = with_winners(one_rank, lambda e: self.first_init_env(
            dict(e, CCLTUNE_NCCL_NET_SETTINGS="off")))
        self.assertEqual((seen["NCCL_SOCKET_NTHREADS"], seen["NCCL_NSOCKS_PERTHREAD"]), (None, None))
        self.assertEqual(err.count("off (CCLTUNE_NCCL_NET_SETTINGS=off): NCCL's own"), 1, err)
        seen, err = with_winners(one_rank, lambda e: self.first_init_env(
            dict(e, CCLTUNE_NCCL_NET_SETTINGS="maybe")))
        self.assertIsNone(seen["NCCL_SOCKET_NTHREADS"])
        self.assertIn("CCLTUNE_NCCL_NET_SETTINGS: 'maybe' is not one of on, off: none set", err)
        # Winners of another world size say nothing of this communicator: nothing set.
        seen, err = with_winners(NODES_SWEEP, self.first_init_env)
        self.assertIsNone(seen["NCCL_SOCKET_NTHREADS"])
        self.assertNotIn("network settings", err)


class RegisterHook(unittest.TestCase):
    """PyTorch reads its register hook's variable before NCCL's first init: the shim sets it as
    it loads (direct mode needs the segments registered), never over the user's value."""

    HOOK = "TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK"

    def hook(self, env):
        out = run(["/usr/bin/env"], dict(env, LD_PRELOAD=SHIM))
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stderr, "")
        values = [l.partition("=")[2] for l in out.stdout.splitlines()
                  if l.startswith(self.HOOK + "=")]
        return values[0] if values else None

    def test_the_shim_turns_the_hook_on_unless_told_otherwise(self):
        self.assertEqual(self.hook({}), "1")
        self.assertEqual(self.hook({self.HOOK: "0"}), "0")
        self.assertIsNone(self.hook({"CCLTUNE_NCCL": "off"}))
        self.assertIsNone(self.hook({"CCLTUNE_DIRECT": "0"}))
        # Values the shim or the runtime refuse leave them off: no hook either.
        self.assertIsNone(self.hook({"CCLTUNE_NCCL": "maybe"}))
        self.assertIsNone(self.hook({"CCLTUNE_DIRECT": "2"}))
        self.assertEqual(self.hook({"CCLTUNE_NCCL": "on", "CCLTUNE_DIRECT": "1"}), "1")
        self.assertNotIn(self.HOOK + "=", run(["/usr/bin/env"]).stdout)  # not preloaded


class MissingNccl(unittest.TestCase):
    def test_a_missing_real_nccl_is_one_clear_line(self):
        out = run([SCENARIOS, "forwarding"],
                  {"LD_PRELOAD": SHIM, "CCLTUNE_NCCL_LIBRARY": "/nonexistent/libnccl.so.2"})
        self.assertEqual(out.returncode, 1)
        self.assertIn("ncclGetVersion failed", out.stdout)
        lines = out.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, out.stderr)
        self.assertRegex(lines[0], r"^ccltune-nccl: CCLTUNE_NCCL_LIBRARY=/nonexistent/libnccl\.so"
                                   r"\.2: .*No such file")


class CheckNccl(unittest.TestCase):
    RECORD = {"schema": 1, "fingerprint": "shim-test", "op": "allReduce", "dtype": "bf16",
              "redop": "sum", "bytes": 65536, "winner": "rs+ag", "winnerParams": {},
              "timeUs": 10.0, "defaultTimeUs": 12.0, "speedupVsDefault": 1.2, "busbwGBs": 1.0,
              "choices": [{"name": "nccl", "params": {}, "timeUs": 12.0, "minUs": 12.0,
                           "maxUs": 12.0, "status": "ok", "busbwGBs": 1.0},
                          {"name": "rs+ag", "params": {}, "timeUs": 10.0, "minUs": 10.0,
                           "maxUs": 10.0, "status": "ok", "busbwGBs": 1.2}],
              "worldSize": 2, "tunedAt": "2026-11-25T08:00:00Z", "jobId": "j", "attempt": 0,
              "toolVersion": "0.1.0"}

    def check(self, env, *args):
        base = {k: v for k, v in os.environ.items()
                if k not in ("LD_PRELOAD", "CCLTUNE_NODE_NAME") + NCCL_ONCE}
        env = dict(base, **env)
        return subprocess.run([CCLTUNE, "check-nccl", SHIM] + list(args), env=env,
                              capture_output=True, text=True, timeout=DEADLINE_S)

    def test_reports_the_real_nccl_fingerprint_and_winners(self):
        import json
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            other = dict(self.RECORD, worldSize=4, bytes=4096)
            json.dump([self.RECORD, dict(self.RECORD, bytes=1 << 20), other], f)
            f.flush()
            out = self.check({"CCLTUNE_RESULTS_FILE": f.name,
                              "CCLTUNE_FINGERPRINT": "shim-test"}, "--world", "2")
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn("built against NCCL %d.%d" % self.header_version(), out.stdout)
        self.assertRegex(out.stdout, r"real NCCL: \S*libnccl\S* \(version code \d+, found by ")
        # Yes only with a CUDA device (the winners run on it); CI machines have none.
        self.assertRegex(out.stdout, r"(?m)^serving calls: (yes|no \(no CUDA device.*\))$")
        self.assertIn("fingerprint (2 ranks, 1 node): shim-test", out.stdout)
        self.assertIn("winners: 2 records for 2 ranks (0 rejected)", out.stdout)

    def test_shows_the_node_the_node_count_and_what_each_size_runs(self):
        out = with_winners(NODES_SWEEP, lambda e: self.check(
            dict(e, CCLTUNE_NODE_NAME="node-a"), "--world", "4", "--nodes", "2"))
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        lines = out.stdout.splitlines()
        self.assertIn("node: node-a (from CCLTUNE_NODE_NAME); NCCL_HOSTID='node-a' set from "
                      "CCLTUNE_NODE_NAME", lines)
        self.assertIn("fingerprint (4 ranks, 2 nodes): shim-test", lines)
        self.assertIn("winners: 4 records for 4 ranks (0 rejected)", lines)
        self.assertIn("network settings before NCCL's first init: %s (won 1 of 4 problems of 4 "
                      "ranks, fingerprint shim-test)" % SOCKETS, lines)
        self.assertIn("will apply (application buffers): 4 tuned sizes", lines)
        self.assertIn("  allReduce bf16/sum 8192: nccl", lines)
        self.assertIn("  allReduce bf16/sum 1048576: rs+ag", lines)
        self.assertIn("  allReduce bf16/sum 67108864: %s" % SOCKETS, lines)
        self.assertTrue(any(l.startswith("  allReduce bf16/sum 4096: nccl (winner "
                                         "nccl:algo=tree,proto=ll: a forced NCCL algorithm/"
                                         "protocol is the tuner plugin's") for l in lines),
                        out.stdout)

    def test_shows_what_captured_calls_run_on_registered_tensors(self):
        # One node: a pull two-shot winner needs shared buffers; plain buffers get the 32-CTA
        # communicator, captured calls on registered tensors the pull kernel (direct mode), and
        # at 8 MiB the pull measured beside a push winner.
        pull, push = "twoshot:blocks=64,mode=pull,threads=256", "twoshot:blocks=128,mode=push,threads=256"
        sweep = [record(1 << 20, pull, {"nccl": 20.0, "nccl:ctas=32": 18.0, pull: 12.4}),
                 record(8 << 20, push, {"nccl": 61.0, "nccl:ctas=32": 57.0, push: 44.6, pull: 46.0}),
                 record(1024, "nccl", {"nccl": 9.0})]
        out = with_winners(sweep, lambda e: self.check(e, "--world", "4"))
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        lines = [l for l in out.stdout.splitlines() if l.startswith("  allReduce")]
        self.assertEqual(len(lines), 3, out.stdout)
        self.assertTrue(lines[0].startswith("  allReduce bf16/sum 1048576: nccl:ctas=32 (winner "
                                            + pull), lines[0])
        self.assertTrue(lines[0].endswith("; captured, on registered tensors: " + pull), lines[0])
        self.assertTrue(lines[1].endswith("; captured, on registered tensors: " + pull), lines[1])
        self.assertEqual(lines[2], "  allReduce bf16/sum 1024: nccl")

    def test_avg_has_a_slice_of_its_own_beside_sum(self):
        # ncclAvg (FSDP2's reduce-scatters) is served from records tuned with avg, never
        # from sum's: each slice lists its own winner.
        rs = dict(op="reduceScatter", dtype="fp32")
        ll128 = "nccl:algo=ring,proto=ll128"
        sweep = [record(1 << 20, "nccl", {"nccl": 30.0, ll128: 29.5}, redop="sum", **rs),
                 record(1 << 20, "rs+ag", {"nccl": 30.0, "rs+ag": 20.0}, redop="avg",
                        **dict(rs, op="allReduce"))]
        out = with_winners(sweep, lambda e: self.check(e, "--world", "4"))
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        lines = out.stdout.splitlines()
        self.assertIn("  reduceScatter fp32/sum 1048576: nccl", lines)
        self.assertIn("  allReduce fp32/avg 1048576: rs+ag", lines)

    def test_a_setting_the_process_already_holds_otherwise_is_not_applied(self):
        out = with_winners(NODES_SWEEP, lambda e: self.check(
            dict(e, NCCL_SOCKET_NTHREADS="2"), "--world", "4", "--nodes", "2"))
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertRegex(out.stdout, r"  allReduce bf16/sum 67108864: nccl \(winner %s: "
                                     r"nccl-net's settings are not this process's "
                                     r"\(NCCL_SOCKET_NTHREADS is '2'" % re.escape(SOCKETS))
        self.assertIn("node: ", out.stdout)
        self.assertRegex(out.stdout, r"(?m)^node: .*NCCL groups ranks by host name \+ boot id")

    def test_more_nodes_than_ranks_is_refused_naming_both(self):
        out = self.check({}, "--world", "2", "--nodes", "3")
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn("fingerprint (2 ranks, 3 nodes): not computed: 3 nodes for 2 ranks: a node "
                      "holds at least one rank", out.stdout)

    def test_a_missing_library_and_a_wrong_one_fail_clearly(self):
        out = self.check({}, "--world", "2")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("winners source: none", out.stdout)
        bad = subprocess.run([CCLTUNE, "check-nccl", "/nonexistent/libccltune-nccl.so"],
                             capture_output=True, text=True, timeout=DEADLINE_S)
        self.assertEqual(bad.returncode, 1)
        self.assertRegex(bad.stderr, r"^ccltune check-nccl: cannot load /nonexistent")
        wrong = subprocess.run([CCLTUNE, "check-nccl", os.path.join(FAKE_DIR, "libnccl.so.2")],
                               capture_output=True, text=True, timeout=DEADLINE_S)
        self.assertEqual(wrong.returncode, 1)
        self.assertIn("is not libccltune-nccl (no ccltuneNcclShimReport)", wrong.stderr)

    @staticmethod
    def header_version():
        with open(NCCL_H) as fh:
            text = fh.read()
        return tuple(int(re.search(r"#define NCCL_%s\s+(\d+)" % k, text).group(1))
                     for k in ("MAJOR", "MINOR"))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)

#!/usr/bin/env python3
"""libccltune-nccl without a GPU (issue 22): a fake NCCL records every call; programs linked
against it run with the shim preloaded.

  nccl_shim_test.py SHIM FAKE_DIR CALLER SCENARIOS NCCL_H CCLTUNE

Checks: every function of nccl.h is exported (the list read from the header here, by another
reading than the build's generator) and nothing else of NCCL's names; the shim needs neither
NCCL nor a shared cudart; every call reaches the fake with the caller's arguments; calls in
groups, on non-blocking communicators, of types and ops not tuned, and every call under
CCLTUNE_NCCL=off or against an NCCL of another version are forwarded, each with its reason;
a missing real NCCL is one clear line; `ccltune check-nccl` reports the NCCL, the fingerprint
and the winners it would load. Every run has a deadline.
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

SHIM, FAKE_DIR, CALLER, SCENARIOS, NCCL_H, CCLTUNE = sys.argv[1:7]
DEADLINE_S = 60


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
              "CCLTUNE_NCCL_LIBRARY", "FAKE_NCCL_VERSION", "CCLTUNE_LOG", "LD_PRELOAD"):
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


def is_subsequence(small, big):
    it = iter(big)
    return all(any(line == b for b in it) for line in small)


class Exports(unittest.TestCase):
    def test_every_header_function_is_exported_and_nothing_else_of_ncclS(self):
        nm = subprocess.run(["nm", "-D", "--defined-only", SHIM], capture_output=True, text=True,
                            check=True, timeout=DEADLINE_S).stdout
        exported = {l.split()[-1] for l in nm.splitlines() if l.split()}
        want = header_functions()
        self.assertGreater(len(want), 70, "too few functions read from %s" % NCCL_H)
        self.assertEqual(sorted(want - exported), [], "not exported")
        extra = {n for n in exported if re.match(r"p?nccl[A-Z]", n)} - want
        self.assertEqual(sorted(extra), [], "exported but not in the header")
        self.assertEqual(sorted(n for n in exported if n.startswith("ccltune")),
                         ["ccltuneNcclShimInfo"])

    def test_needs_no_nccl_and_no_shared_cudart(self):
        dyn = subprocess.run(["readelf", "-d", SHIM], capture_output=True, text=True, check=True,
                             timeout=DEADLINE_S).stdout
        needed = re.findall(r"\(NEEDED\).*\[(.*)\]", dyn)
        self.assertFalse([n for n in needed if "nccl" in n or "cudart" in n], needed)


class EveryCall(unittest.TestCase):
    def test_each_function_reaches_the_fake_with_the_callers_arguments(self):
        n = len(header_functions())
        plain = run([CALLER])
        self.assertEqual(plain.returncode, 0, plain.stdout + plain.stderr)
        shimmed = run([CALLER], {"LD_PRELOAD": SHIM})
        self.assertEqual(shimmed.returncode, 0, shimmed.stdout + shimmed.stderr)
        self.assertIn("%d functions called, 0 mismatches" % n, shimmed.stdout)


class Forwarding(unittest.TestCase):
    def scenario(self, name, env=None):
        with tempfile.TemporaryDirectory() as d:
            plain = run([SCENARIOS, name], log=os.path.join(d, "plain"))
            self.assertEqual(plain.returncode, 0, plain.stdout + plain.stderr)
            env = dict(env or {}, LD_PRELOAD=SHIM)
            shimmed = run([SCENARIOS, name], env, log=os.path.join(d, "shim"))
            return (plain, fake_log(os.path.join(d, "plain")), shimmed,
                    fake_log(os.path.join(d, "shim")))

    def test_ineligible_calls_are_forwarded_with_their_reason(self):
        _, plain_log, out, shim_log = self.scenario("forwarding", {"CCLTUNE_NCCL_DEBUG": "1"})
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertTrue(is_subsequence(plain_log, shim_log), "a call did not reach NCCL unchanged")
        err = out.stderr
        self.assertRegex(err, r"plain NCCL: no winners source \(set CCLTUNE_RESULTS_FILE")
        self.assertEqual(err.count("-> NCCL (in a group)"), 2, err)
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
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            f.write("[]")
            f.flush()
            _, plain_log, out, shim_log = self.scenario(
                "forwarding", {"CCLTUNE_RESULTS_FILE": f.name})
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertTrue(is_subsequence(plain_log, shim_log))
        self.assertEqual(len(re.findall(r"plain NCCL: libccltune init failed", out.stderr)), 1,
                         out.stderr)

    def test_off_forwards_everything_silently(self):
        _, plain_log, out, shim_log = self.scenario(
            "forwarding", {"CCLTUNE_NCCL": "off", "CCLTUNE_NCCL_DEBUG": "1"})
        self.assertEqual(out.returncode, 0)
        self.assertEqual(shim_log[1:], plain_log)  # the first: the shim's own version check
        self.assertEqual(out.stderr, "")

    def test_a_bad_switch_value_is_one_line_naming_it(self):
        _, plain_log, out, shim_log = self.scenario("forwarding", {"CCLTUNE_NCCL": "yes"})
        self.assertEqual(out.returncode, 0)
        self.assertEqual(out.stderr.strip().splitlines(),
                         ["ccltune-nccl: CCLTUNE_NCCL: 'yes' is not one of on, off: forwarding "
                          "every call"])
        self.assertTrue(is_subsequence(plain_log, shim_log))

    def test_another_nccl_version_is_forwarded_with_one_line(self):
        _, plain_log, out, shim_log = self.scenario(
            "forwarding", {"FAKE_NCCL_VERSION": "22705", "CCLTUNE_NCCL_DEBUG": "1"})
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        lines = out.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, out.stderr)
        self.assertRegex(lines[0], r"is NCCL 22705, built against 2\.\d+: forwarding every call")
        self.assertTrue(is_subsequence(plain_log, shim_log))

    def test_split_children_and_teardown(self):
        _, plain_log, out, shim_log = self.scenario("lifecycle", {"CCLTUNE_NCCL_DEBUG": "1"})
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertTrue(is_subsequence(plain_log, shim_log))
        self.assertEqual(out.stderr.count("-> NCCL (non-blocking communicator)"), 1, out.stderr)
        self.assertRegex(out.stderr, r"aborted: 0 calls served by winners, 1 forwarded")
        self.assertEqual(len(re.findall(r"destroyed: 0 calls", out.stderr)), 2, out.stderr)


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
        env = dict(os.environ, **env)
        env.pop("LD_PRELOAD", None)
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
        self.assertIn("serving calls: yes", out.stdout)
        self.assertIn("fingerprint (2 ranks, 1 node): shim-test", out.stdout)
        self.assertIn("winners: 2 records for 2 ranks (0 rejected)", out.stdout)

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
        self.assertIn("is not libccltune-nccl (no ccltuneNcclShimInfo)", wrong.stderr)

    @staticmethod
    def header_version():
        with open(NCCL_H) as fh:
            text = fh.read()
        return tuple(int(re.search(r"#define NCCL_%s\s+(\d+)" % k, text).group(1))
                     for k in ("MAJOR", "MINOR"))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)

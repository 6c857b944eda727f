#!/usr/bin/env python3
"""preload_table.py's paired sign test and per-pair counts on exact values; no GPU needed."""
import contextlib
import io
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import preload_table as pt  # noqa: E402

MIB4 = 4 << 20


def run(times):
    """One torch_symm_bench run's records, as load() keeps them: (bytes, mode, kernel) -> us."""
    return {(MIB4, "eager", "nccl"): t for t in times}


class SignTestTest(unittest.TestCase):
    def test_exact_tails(self):
        self.assertEqual(pt.sign_test_p(5, 5), 1 / 32)
        self.assertEqual(pt.sign_test_p(0, 8), 1.0)
        # 6 of 8: (C(8,6) + C(8,7) + C(8,8)) / 256 = 37 / 256
        self.assertAlmostEqual(pt.sign_test_p(6, 8), 37 / 256)
        self.assertLess(pt.sign_test_p(7, 8), 0.05)
        self.assertLess(pt.sign_test_p(12, 15), 0.05)
        self.assertGreater(pt.sign_test_p(11, 15), 0.05)

    def test_paired_counts_each_pair_once(self):
        # 4x H200's 4 MiB eager pairs (eager-host-rule.md): preloaded slower in 6 of 8.
        plain = [46.79, 50.07, 45.93, 45.71, 45.37, 43.80, 50.54, 51.42]
        pre = [56.42, 67.73, 46.67, 45.47, 45.45, 59.11, 58.55, 46.44]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            pt.paired([run([t]) for t in plain], [run([t]) for t in pre], "eager")
        self.assertIn("| 4 MiB | 6 of 8 | 0.145 |", out.getvalue())


if __name__ == "__main__":
    unittest.main()

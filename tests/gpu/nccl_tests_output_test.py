#!/usr/bin/env python3
"""nccl_tests_output.py on real nccl-tests rows, exact values; no GPU needed."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccl_tests_output as nto  # noqa: E402

CHECKED = ("      262144        131072  bfloat16     sum      -1    11.34   23.12   34.68"
           "      0    11.30   23.20   34.80      2\n")
UNCHECKED = ("        1024           256  bfloat16    none      -1     5.82    0.18    0.09"
             "    N/A     6.06    0.17    0.08    N/A\n")


class NcclTestsOutputTest(unittest.TestCase):
    def test_reads_both_column_groups_and_wrong_counts(self):
        size, row = nto.parse_line(CHECKED)
        self.assertEqual(size, 262144)
        self.assertEqual(row, nto.Row(11.34, 34.68, 0, 11.30, 34.80, 2))

    def test_unchecked_runs_have_no_wrong_counts(self):
        self.assertEqual(nto.parse_line(UNCHECKED),
                         (1024, nto.Row(5.82, 0.09, None, 6.06, 0.08, None)))

    def test_skips_headers_and_other_lines(self):
        for line in ("#       size         count      type   redop    root     time   algbw",
                     "# Avg bus bandwidth    : 12.3", "ccltune-nccl: comm 0x1 destroyed", ""):
            self.assertIsNone(nto.parse_line(line))

    def test_reads_a_file_by_size(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("# nThread 4\n" + UNCHECKED + CHECKED)
        try:
            self.assertEqual(sorted(nto.read(f.name)), [1024, 262144])
        finally:
            os.unlink(f.name)


if __name__ == "__main__":
    unittest.main()

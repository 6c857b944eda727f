#!/usr/bin/env python3
"""gpu_affinity.py's core lists and shares, exact values; no GPU needed."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_affinity  # noqa: E402


class GpuAffinityTest(unittest.TestCase):
    def test_parses_and_prints_kernel_cpu_lists(self):
        self.assertEqual(gpu_affinity.parse_cpulist("0-3,8,10-11\n"), {0, 1, 2, 3, 8, 10, 11})
        self.assertEqual(gpu_affinity.describe({0, 1, 2, 5, 7, 8}), "0-2,5,7-8")
        self.assertEqual(gpu_affinity.describe(set()), "")
        self.assertEqual(gpu_affinity.describe_all([{0, 1}, {5}]), ["0-1", "5"])
        self.assertIsNone(gpu_affinity.describe_all(None))

    def test_ranks_on_one_node_share_its_cores_evenly(self):
        node0, node1 = set(range(0, 8)), set(range(8, 16))
        shares = gpu_affinity.split([node0, node0, node1, node1], 4, set(range(16)),
                                    lambda c: frozenset([c]))
        self.assertEqual(shares, [{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}])

    def test_shares_stay_within_the_allowed_cores(self):
        node = set(range(0, 8))
        alone = lambda c: frozenset([c])  # noqa: E731
        self.assertEqual(gpu_affinity.split([node, node], 2, {1, 2, 5, 6, 30}, alone),
                         [{1, 2}, {5, 6}])
        self.assertIsNone(gpu_affinity.split([node, node], 2, {1}, alone))

    def test_two_ranks_never_share_a_physical_core(self):
        # cpu i and i + 4 are one core's two hardware threads
        def siblings_of(c):
            return frozenset({c % 4, c % 4 + 4})
        node = set(range(8))
        self.assertEqual(gpu_affinity.split([node, node], 2, node, siblings_of),
                         [{0, 4, 1, 5}, {2, 6, 3, 7}])


if __name__ == "__main__":
    unittest.main()

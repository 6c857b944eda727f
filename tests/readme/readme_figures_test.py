#!/usr/bin/env python3
"""The README figure checker fails where a figure is not in its file, so it cannot go blind.

Each case writes a small README and results file into a temporary repository root and runs
the checker on them; the last cases alter one figure of the real README.
"""
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import readme_figures  # noqa: E402
import readme_generators  # noqa: E402

RESULTS = """# a run
| size | time (us) | speedup |
|---|---|---|
| 1024 | 9.98 | 2.40x |
| 1048576 | 197.4 | 1,045 |
real	0m16.630s
forwarded +867.8 ns
"""


class Repo:
    def __init__(self, readme, results=RESULTS):
        self.root = tempfile.mkdtemp(prefix="readme-figures-")
        os.makedirs(os.path.join(self.root, "results"))
        with open(os.path.join(self.root, "results", "run.md"), "w") as f:
            f.write(results)
        self.readme = os.path.join(self.root, "README.md")
        with open(self.readme, "w") as f:
            f.write(readme)

    def check(self, write=False):
        errors, _, _ = readme_figures.run(self.readme, self.root, write)
        return errors

    def text(self):
        with open(self.readme) as f:
            return f.read()

    def close(self):
        shutil.rmtree(self.root)


def readme(body, section="Measured results"):
    return "# project\n\n## %s\n\n%s\n" % (section, body)


class Checker(unittest.TestCase):
    def run_case(self, body, section="Measured results", results=RESULTS):
        repo = Repo(readme(body, section), results)
        self.addCleanup(repo.close)
        return repo.check()

    def test_figures_in_their_file_pass(self):
        self.assertEqual(self.run_case(
            "NCCL took 9.98 µs at 1 KiB, 2.40× slower; 1045 dropped; 16.6 s wall; "
            "+0.87 µs a call; 1 MiB. <!-- figures: results/run.md -->"), [])

    def test_an_altered_figure_fails_naming_it(self):
        errors = self.run_case("NCCL took 9.14 µs at 1 KiB. <!-- figures: results/run.md -->")
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("9.14 is not in results/run.md", errors[0])

    def test_rounding_goes_only_to_the_readme_precision(self):
        self.assertEqual(self.run_case("197 µs, 0.2 ms <!-- figures: results/run.md -->"), [])
        errors = self.run_case("198 µs <!-- figures: results/run.md -->")
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("198 is not in", errors[0])

    def test_thousands_separators_are_one_number(self):
        self.assertEqual(self.run_case("1,045 of them <!-- figures: results/run.md -->"), [])
        self.assertEqual(len(self.run_case("1,043 of them <!-- figures: results/run.md -->")), 1)

    def test_an_unannotated_figure_in_a_checked_section_fails(self):
        errors = self.run_case("NCCL took 9.98 µs at 1 KiB.")
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("have no source", errors[0])

    def test_unchecked_sections_and_settings_and_code_spans_pass(self):
        self.assertEqual(self.run_case("A limit of 42 s.", section="Deploy on a cluster"), [])
        self.assertEqual(self.run_case("A limit of 42 s. <!-- figures: setting -->"), [])
        self.assertEqual(self.run_case("Run `tune --ranks 42` and see the file. "
                                       "<!-- figures: results/run.md -->"), [])

    def test_a_decimal_in_an_annotated_code_span_is_checked(self):
        errors = self.run_case("It prints `took 9.14 us`. <!-- figures: results/run.md -->")
        self.assertEqual(len(errors), 1, errors)

    def test_a_standalone_annotation_covers_the_next_table(self):
        ok = "<!-- figures: results/run.md -->\n| a | b |\n|---|---|\n| 9.98 | 2.40x |"
        self.assertEqual(self.run_case(ok), [])
        self.assertEqual(len(self.run_case(ok.replace("9.98", "9.99"))), 1)

    def test_a_missing_source_is_an_error(self):
        errors = self.run_case("9.98 <!-- figures: results/gone.md -->")
        self.assertIn("results/gone.md: no such file or folder", errors[0])

    def test_a_generated_region_must_equal_its_output_and_write_regenerates_it(self):
        readme_figures.GENERATORS["test-first-row"] = lambda path: readme_generators.read(
            path).split("\n")[3] + "\n"
        self.addCleanup(readme_figures.GENERATORS.pop, "test-first-row")
        body = ("<!-- figures: results/run.md#test-first-row -->\n"
                "| 1024 | 9.14 | 2.40x |\n<!-- /figures -->")
        repo = Repo(readme(body))
        self.addCleanup(repo.close)
        errors = repo.check()
        self.assertEqual(len(errors), 3, errors)
        self.assertIn("differ from its output", errors[0])
        self.assertIn("README    | 1024 | 9.14 | 2.40x |", errors[1])
        self.assertEqual(repo.check(write=True), [])
        self.assertIn("| 1024 | 9.98 | 2.40x |", repo.text())
        self.assertEqual(repo.check(), [])

    def test_an_unknown_generator_is_an_error(self):
        errors = self.run_case("9.98 <!-- figures: results/run.md#no-such -->")
        self.assertIn("unknown generator 'no-such'", errors[0])


class RealReadme(unittest.TestCase):
    """One figure of the real README altered: the check must fail on it."""

    def altered(self, old, new):
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            text = f.read()
        self.assertIn(old, text)
        tmp = tempfile.mkdtemp(prefix="readme-figures-")
        self.addCleanup(shutil.rmtree, tmp)
        path = os.path.join(tmp, "README.md")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new, 1))
        errors, _, _ = readme_figures.run(path, ROOT)
        return errors

    def test_the_real_readme_passes(self):
        self.assertEqual(self.altered("1.997×", "1.997×"), [])

    def test_an_altered_prose_figure_fails(self):
        errors = self.altered("1.997×", "2.02×")
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("2.02 is not in tests/gpu/results/runtime-2xH200.md", errors[0])

    def test_an_altered_generated_table_cell_fails(self):
        errors = self.altered("| 9.98 | 11.21 |", "| 9.14 | 11.21 |")
        self.assertTrue(any("differ from its output" in e for e in errors), errors)


if __name__ == "__main__":
    unittest.main()

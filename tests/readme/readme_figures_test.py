#!/usr/bin/env python3
"""The figure checker fails where a figure is not in its file, so it cannot go blind.

Each case writes a small README (and docs pages) and a results file into a temporary
repository root and runs the checker on them; the last cases alter one figure of the real
README.md and docs/ pages.
"""
import io
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

    def page(self, rel, text):
        """Writes a page (e.g. docs/guide.md) under the root; returns its path."""
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    def check(self, write=False, page=None):
        errors, _, _ = readme_figures.run(page or self.readme, self.root, write)
        return errors

    def main(self, *paths):
        """check_pages over paths relative to the root: (exit code, what it printed)."""
        out = io.StringIO()
        rc = readme_figures.check_pages([os.path.join(self.root, p) for p in paths],
                                        self.root, out=out)
        return rc, out.getvalue()

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


class DocsPages(unittest.TestCase):
    """Pages other than the top-level README: checked whole, several at once."""

    def repo(self):
        repo = Repo(readme("9.98 µs <!-- figures: results/run.md -->"))
        self.addCleanup(repo.close)
        return repo

    def test_a_docs_page_is_checked_in_every_section(self):
        repo = self.repo()
        page = repo.page("docs/deploy.md", readme("NCCL took 9.98 µs at 1 KiB.",
                                                  section="Deploy on a cluster"))
        errors = repo.check(page=page)
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("have no source", errors[0])

    def test_sources_on_a_docs_page_start_at_the_repository_root(self):
        repo = self.repo()
        page = repo.page("docs/results/gpu.md", readme(
            "NCCL took 9.98 µs at 1 KiB. <!-- figures: results/run.md -->"))
        self.assertEqual(repo.check(page=page), [])
        page = repo.page("docs/results/gpu.md", readme(
            "NCCL took 9.14 µs at 1 KiB. <!-- figures: results/run.md -->"))
        self.assertIn("9.14 is not in results/run.md", repo.check(page=page)[0])

    def test_a_page_may_leave_the_sections_it_names_unchecked(self):
        repo = self.repo()
        body = ("<!-- figures-unchecked: Deploy; Limits -->\n\n## Deploy on a cluster\n\n"
                "Port 8080, 30 s.\n\n### Probes\n\nPort 8081.\n\n## Limits\n\n64 winners.\n\n"
                "## Measured\n\nNCCL took 9.98 µs.\n")
        errors = repo.check(page=repo.page("docs/deploy.md", "# Cluster\n\n" + body))
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("9.98 have no source", errors[0])
        # A name that the page's title starts with leaves the whole page unchecked.
        self.assertEqual(repo.check(page=repo.page("docs/deploy.md", "# Deploy\n\n" + body)),
                         [])

    def test_an_unchecked_name_that_starts_no_heading_is_an_error(self):
        repo = self.repo()
        errors = repo.check(page=repo.page("docs/deploy.md", "# Cluster\n\n"
                                           "<!-- figures-unchecked: Deploy -->\n\nText.\n"))
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("'Deploy', which starts no heading", errors[0])

    def test_several_pages_and_a_folder_fail_together_naming_the_page(self):
        repo = self.repo()
        repo.page("docs/a.md", readme("9.98 µs <!-- figures: results/run.md -->"))
        repo.page("docs/results/b.md", readme("197.4 µs <!-- figures: results/run.md -->"))
        rc, out = repo.main("README.md", "docs")
        self.assertEqual(rc, 0, out)
        self.assertEqual(out.count("OK: "), 3, out)
        repo.page("docs/results/c.md", readme("NCCL took 9.14 µs."))
        rc, out = repo.main("README.md", "docs")
        self.assertEqual(rc, 1, out)
        self.assertIn("docs/results/c.md:5: figures 9.14 have no source", out)
        self.assertIn("FAILED: docs/results/c.md:", out)
        rc, out = repo.main("docs/a.md", "docs/gone.md")
        self.assertEqual(rc, 1, out)
        self.assertIn("docs/gone.md: ", out)


class Citations(unittest.TestCase):
    """A page names what it means: no tracker's issue number, no sessions."""

    def failures(self, body):
        repo = Repo(readme("9.98 µs <!-- figures: results/run.md -->"))
        self.addCleanup(repo.close)
        repo.page("docs/guide.md", "# Guide\n\n" + body)
        return repo.main("README.md", "docs")

    def test_an_issue_number_fails_naming_file_and_line(self):
        rc, out = self.failures("Direct mode\n(issue 43) runs on the tensors.\n")
        self.assertEqual(rc, 1, out)
        self.assertIn("docs/guide.md:4: cites 'issue 43'", out)
        self.assertIn("FAILED: docs/guide.md", out)
        self.assertIn("OK: README.md:", out)

    def test_every_form_of_an_issue_citation_fails(self):
        for text, cite in (("With Issues 44 and 46 done.", "Issues 44 and 46"),
                           ("Issues 8, 16, and 25.", "Issues 8, 16, and 25"),
                           ("See [it](../runtime/README.md#a-peer-that-dies-issue-36).",
                            "issue-36"),
                           ("Fixed (#45).", "#45"),
                           ("Text. <!-- issue 37 -->", "issue 37")):
            rc, out = self.failures(text + "\n")
            self.assertEqual(rc, 1, (text, out))
            self.assertIn("docs/guide.md:3: cites %r" % cite, out)
        rc, out = self.failures("```sh\nccltune tune   # issue #7\n```\n")
        self.assertIn("docs/guide.md:4: cites 'issue #7'", out)

    def test_sessions_fail_naming_file_and_line(self):
        for text in ("Fixed in this session.", "Other sessions' builds ran beside it.",
                     "The third Session's run."):
            rc, out = self.failures("First line.\n" + text + "\n")
            self.assertEqual(rc, 1, (text, out))
            self.assertRegex(out, r"docs/guide.md:4: speaks of '[Ss]essions?'")

    def test_sections_anchors_and_the_verb_pass(self):
        rc, out = self.failures(
            "[CRD](design.md#6-collectivetuningjob), [§13](design.md#13-program-telemetry), "
            "[top](#1-layout): the host's cost to issue 20 ops; it issues 20 of them.\n\n"
            "```\n 1/98 Test  #1: core_sizes_test ... Passed\n```\n")
        self.assertEqual(rc, 0, out)


def real_pages():
    """README.md and every docs/ page of this repository, relative to its root."""
    pages = readme_figures.pages_of([os.path.join(ROOT, "README.md"), os.path.join(ROOT, "docs")])
    return [os.path.relpath(p, ROOT) for p in pages]


class RealReadme(unittest.TestCase):
    """One figure of the real README.md or docs/ pages altered: the check must fail on it."""

    def altered(self, old, new):
        found = []
        for rel in real_pages():
            with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
                text = f.read()
            if old in text:
                found.append((rel, text))
        self.assertEqual(len(found), 1, "%r on pages %s" % (old, [r for r, _ in found]))
        rel, text = found[0]
        tmp = tempfile.mkdtemp(prefix="readme-figures-")
        self.addCleanup(shutil.rmtree, tmp)
        path = os.path.join(tmp, os.path.basename(rel))
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new, 1))
        errors, _, _ = readme_figures.run(path, ROOT, name=rel)
        return errors

    def test_the_real_readme_passes(self):
        self.assertEqual(self.altered("17 sizes: 1.997×", "17 sizes: 1.997×"), [])

    def test_every_real_page_passes(self):
        self.assertIn("README.md", real_pages())
        for rel in real_pages():
            errors, _, _ = readme_figures.run(os.path.join(ROOT, rel), ROOT)
            self.assertEqual(errors, [], rel)

    def test_an_altered_prose_figure_fails(self):
        errors = self.altered("17 sizes: 1.997×", "17 sizes: 2.02×")
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("2.02 is not in tests/gpu/results/runtime-2xH200.md", errors[0])

    def test_an_altered_generated_table_cell_fails(self):
        errors = self.altered("| 9.98 | 11.21 |", "| 9.14 | 11.21 |")
        self.assertTrue(any("differ from its output" in e for e in errors), errors)

    def test_an_altered_headline_figure_in_the_readme_fails(self):
        errors = self.altered("**1.76×** faster", "**9.76×** faster")
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("9.76 is not in tests/gpu/results/own-kernels-h200.md", errors[0])


if __name__ == "__main__":
    unittest.main()

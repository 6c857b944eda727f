#!/usr/bin/env python3
"""The figures of README.md and docs/ against the results files they come from.

Annotation convention (HTML comments, which GitHub does not render):

  <!-- figures: SOURCE [SOURCE ...] -->
      Inside a block (a paragraph, a list item, a table, a fenced code block or a heading),
      anywhere in it: every number of that block must occur in one of the SOURCEs. On a line
      of its own: the same for the block that follows.
  <!-- figures: PATH#GENERATOR -->  (own line)  ...  <!-- /figures -->  (own line)
      The lines between are GENERATOR's output for PATH, exactly (indented as the opening
      comment is); --write regenerates them.
  <!-- figures: setting -->
      The block's numbers are settings, limits, versions or reasoning, not measurements.

SOURCE is a file or folder relative to the repository root, on every page alike (a folder:
every text file under it, .tgz archives included), or PATH#GENERATOR: a function of readme_generators.py applied to
PATH, for tables and for figures derived from a file (the checker recomputes them). A new
results section: cite its file in each paragraph, table and list item that quotes it.

Numbers compare after normalising their form: thousands separators, signs (+, -, U+2212),
units and "x"/"×" suffixes are dropped. A README figure matches a file figure that rounds to
it at the README's precision (197 matches 197.4, 0.03 matches 0.026), one 1000 times smaller
or larger (0.87 µs matches 867.8 ns), a size in KiB/MiB/GiB given in bytes (64 MiB matches
67108864), and `time`'s 0m16.630s as 16.630. Versions (2.28.3) must occur as written. Not
figures: numbers in link targets, after "§", after a comparison sign (≥ 95 %,
< 100 µs: bars and thresholds), and in `code spans` (commands, choice names) except their
decimals in an annotated block (sample output). Fenced code is checked only where annotated.

Each number is looked up alone: a range whose two ends both occur somewhere in the cited
file passes, so cite the narrowest file, and derive ranges with a generator.

Coverage: a block with a number and no annotation fails where its section is checked, so a
new figure without a source fails. In the top-level README.md the checked sections are those
named in CHECKED_SECTIONS (and their subsections). Every other page (docs/) is checked whole,
except the sections it names, on a line of its own, in

  <!-- figures-unchecked: HEADING [; HEADING ...] -->

(heading prefixes, subsections included: settings, contracts, reasoning, or sample output
whose run kept no results file). A name that matches no heading of the page is an error.

  python3 tests/readme/readme_figures.py [--write] [--root DIR] [PAGE|FOLDER ...]

Citations: a page names what it means, never a tracker's number or who ran something when. A
line that cites an issue ("issue 45", "issues 44 and 46", "(#45)", a link anchor "...-issue-16")
or speaks of a session ("this session", "other sessions' builds") fails, named file:line: link
the design section or the results file instead, and say when and where by date and machine.
The check reads every line, fenced code and HTML comments included.

Pages default to README.md and docs/ of this repository; a folder means every .md file under
it. ctest runs it so (tests/readme/CMakeLists.txt, test readme_figures).
"""

import argparse
import bisect
import decimal
import os
import re
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from readme_generators import GENERATORS  # noqa: E402

# Headings (prefixes) of the top-level README.md whose sections hold measured figures;
# subsections are included. Other pages are checked whole but for their figures-unchecked list.
TOP_README = "README.md"
CHECKED_SECTIONS = ("Quickstart", "Worked example", "Measured results")

ANNOTATION = re.compile(r"<!--\s*figures:\s*(.*?)\s*-->")
UNCHECKED = re.compile(r"^\s*<!--\s*figures-unchecked:\s*(.*?)\s*-->\s*$")
CLOSE = re.compile(r"^\s*<!--\s*/figures\s*-->\s*$")
COMMENT = re.compile(r"<!--.*?-->")
HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s")
FENCE = re.compile(r"^\s*(```|~~~)")
TEXT_SUFFIXES = (".md", ".txt", ".json", ".csv", ".log", ".yaml", ".svg", ".h", ".cc", ".cu",
                 ".py", ".sh")

VERSION = r"\d+\.\d+\.\d+(?:\.\d+)*"
NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
# Not inside a word, a version or a hex id: no letter, digit, "_" or "." on either side
# (an "x" right after a number is its ratio suffix).
TOKEN = re.compile(r"(?<![\w.§])(%s|%s)(?:x)?(?![\w]|\.\d)" % (VERSION, NUMBER))


BINARY_UNIT = re.compile(r"\s?([KMG])iB\b")


class Figure:
    def __init__(self, text, line, unit=None):
        self.text, self.line = text, line
        self.is_version = text.count(".") >= 2 and "," not in text
        if not self.is_version:
            self.value = decimal.Decimal(text.replace(",", ""))
            self.places = len(text.split(".")[1]) if "." in text else 0
        # A size in KiB/MiB/GiB may be given in bytes in the file.
        self.bytes = None
        if unit and not self.is_version and self.places == 0:
            self.bytes = self.value * (1 << (10 * "KMG".index(unit) + 10))


def figures_in(text, line=0):
    out = []
    for m in TOKEN.finditer(text):
        u = BINARY_UNIT.match(text, m.end())
        out.append(Figure(m.group(1), line, u.group(1) if u else None))
    return out


def prose_text(line, spans=False):
    """What of a Markdown line carries figures: no comments, link targets, and of code spans
    (commands, options, choice names) only their decimal figures (sample output) if `spans`."""
    line = COMMENT.sub(" ", line)
    line = re.sub(r"`[^`]*`", lambda m: span_decimals(m.group(0)) if spans else " ", line)
    line = re.sub(r"\]\([^)]*\)", "] ", line)
    line = re.sub(r"\bissues? #?\d+(?:,\s*\d+)*", " ", line)
    line = re.sub(r"\bhttps?://\S+", " ", line)
    line = re.sub(r"[≥≤<>]\s*[\d.,]+", " ", line)
    return line.replace("\u2212", "-")


def span_decimals(span):
    return " %s " % " ".join(f.text for f in figures_in(span) if "." in f.text
                             and not f.is_version)


class Block:
    def __init__(self, kind, first, section):
        self.kind, self.first, self.section = kind, first, section
        self.lines = []         # (line number, text)
        self.sources = []       # annotation texts
        self.region = None      # (source, first body line index, last) for generated regions


class Splitter:
    """Splits a README into blocks (with their section and annotations) and generated regions."""

    def __init__(self, lines):
        self.lines, self.blocks, self.regions = lines, [], []
        self.section, self.pending, self.cur = [], [], None

    def close(self):
        if self.cur is not None:
            self.blocks.append(self.cur)
        self.cur = None

    def start(self, kind, n):
        self.close()
        self.cur = Block(kind, n, " > ".join(self.section))
        # Annotations on their own line belong to the block after them.
        self.cur.sources, self.pending = self.pending, []

    def add(self, n, line):
        self.cur.lines.append((n, line))
        self.cur.sources += ANNOTATION.findall(re.sub(r"`[^`]*`", " ", line))  # not quoted

    def annotation_line(self, i, spec):
        """Returns the index of the next line to read."""
        self.close()
        end = find_close(self.lines, i)
        if end is None:
            self.pending.append(spec)
            return i + 1
        self.regions.append((spec, i, end))
        return end + 1

    def fenced(self, i):
        self.start("code", i + 1)
        self.add(i + 1, self.lines[i])
        i += 1
        while i < len(self.lines) and not FENCE.match(self.lines[i]):
            self.add(i + 1, self.lines[i])
            i += 1
        self.close()
        return i + 1

    def other(self, n, line):
        h = HEADING.match(line)
        if h:
            self.section[len(h.group(1)) - 1:] = [COMMENT.sub("", h.group(2)).strip()]
            self.start("heading", n)
        elif not line.strip():
            self.close()
            return
        elif line.lstrip().startswith("|"):
            if self.cur is None or self.cur.kind != "table":
                self.start("table", n)
        elif LIST_ITEM.match(line) or self.cur is None or self.cur.kind in ("table", "heading"):
            self.start("prose", n)
        self.add(n, line)

    def run(self):
        i = 0
        while i < len(self.lines):
            line = self.lines[i]
            only = ANNOTATION.fullmatch(line.strip())
            if only:
                i = self.annotation_line(i, only.group(1))
            elif FENCE.match(line):
                i = self.fenced(i)
            else:
                self.other(i + 1, line)
                i += 1
        self.close()
        errors = ["an annotation at the end covers nothing: %s" % p for p in self.pending]
        return self.blocks, self.regions, errors


def parse(lines):
    """Returns (blocks, generated regions, errors) of a README's lines."""
    return Splitter(lines).run()


def find_close(lines, i):
    """Index of the <!-- /figures --> that closes a region opened at line i, or None."""
    fenced = False
    for j in range(i + 1, len(lines)):
        if FENCE.match(lines[j]):
            fenced = not fenced
        elif fenced:
            continue
        elif CLOSE.match(lines[j]):
            return j
        elif ANNOTATION.search(lines[j]) or HEADING.match(lines[j]):
            return None
    return None


class Sources:
    """Figures of files, folders and generator outputs, read once each."""

    def __init__(self, root):
        self.root, self.cache = root, {}

    def read(self, spec):
        if spec not in self.cache:
            self.cache[spec] = self._read(spec)
        return self.cache[spec]

    def _read(self, spec):
        path, _, gen = spec.partition("#")
        full = os.path.join(self.root, path)
        if not os.path.exists(full):
            raise LookupError("%s: no such file or folder" % path)
        if gen:
            if gen not in GENERATORS:
                raise LookupError("%s: unknown generator %r (known: %s)" % (
                    spec, gen, ", ".join(sorted(GENERATORS))))
            return GENERATORS[gen](full)
        return "\n".join(text_of(full))

    def figures(self, spec):
        key = ("figures", spec)
        if key not in self.cache:
            text = self.read(spec).replace("\u2212", "-")
            # `time`'s "real 0m16.630s" is 16.630 seconds.
            text += " ".join(" %.3f " % (int(m) * 60 + float(sec)) for m, sec in
                             re.findall(r"\b(\d+)m(\d+\.\d+)s\b", text))
            found = figures_in(text)
            values = sorted({f.value for f in found if not f.is_version})
            self.cache[key] = (values, {f.text for f in found if f.is_version})
        return self.cache[key]


def text_of(path):
    if os.path.isdir(path):
        for d, _, names in sorted(os.walk(path)):
            for name in sorted(names):
                yield from text_of(os.path.join(d, name))
    elif path.endswith((".tgz", ".tar.gz")):
        with tarfile.open(path) as tar:
            for m in tar.getmembers():
                if m.isfile() and m.name.endswith(TEXT_SUFFIXES):
                    yield tar.extractfile(m).read().decode("utf-8", "replace")
    elif path.endswith(TEXT_SUFFIXES):
        with open(path, encoding="utf-8") as f:
            yield f.read()


def matches(fig, values, versions):
    if fig.is_version:
        return fig.text in versions
    # The file may give it in the unit 1000 times smaller or larger (ns, µs, ms, s).
    if any(rounds_to(fig.value.scaleb(k), fig.places - k, values) for k in (0, 3, -3)):
        return True
    return fig.bytes is not None and rounds_to(fig.bytes, 0, values)


def rounds_to(value, places, values):
    """Whether a file figure rounds to `value` at `places` decimals (within half a unit of
    its last place)."""
    unit = decimal.Decimal(1).scaleb(-places)
    k = bisect.bisect_left(values, value - unit / 2)
    while k < len(values) and values[k] <= value + unit / 2:
        if values[k].quantize(unit, rounding=decimal.ROUND_HALF_UP) == value:
            return True
        k += 1
    return False


def block_figures(block, annotated):
    if block.kind == "code":
        return [f for n, t in block.lines[1:] for f in figures_in(COMMENT.sub(" ", t), n)]
    return [f for n, t in block.lines for f in figures_in(prose_text(t, annotated), n)]


def checked(section, prefixes=CHECKED_SECTIONS):
    top = section.split(" > ")
    return any(s.startswith(prefixes) for s in top)


class Coverage:
    """Which sections of one page must annotate their figures (see the module's "Coverage")."""

    def __init__(self, name, lines):
        self.top = name == TOP_README
        self.unchecked, self.errors = (), []
        if self.top:
            return
        names = [h.strip() for line in lines for m in [UNCHECKED.match(line)] if m
                 for h in m.group(1).split(";") if h.strip()]
        headings = [COMMENT.sub("", m.group(2)).strip() for line in lines
                    for m in [HEADING.match(line)] if m]
        self.unchecked = tuple(names)
        self.errors = ["figures-unchecked names %r, which starts no heading of the page" % n
                       for n in names if not any(h.startswith(n) for h in headings)]

    def __call__(self, section):
        if self.top:
            return checked(section)
        return not (self.unchecked and checked(section, self.unchecked))


def check_block(block, sources, errors, covered=checked):
    specs = [s for text in block.sources for s in text.split()]
    figs = block_figures(block, bool(specs))
    if specs == ["setting"]:
        return
    if "setting" in specs:
        errors.append("line %d: 'setting' cannot be combined with sources" % block.first)
        return
    if not specs:
        if figs and covered(block.section) and block.kind != "code":
            errors.append("line %d: figures %s have no source (annotate the %s with "
                          "<!-- figures: FILE -->)" % (
                              block.first, ", ".join(f.text for f in figs[:8]), block.kind))
        return
    pools = []
    for spec in specs:
        try:
            pools.append((spec, sources.figures(spec)))
        except LookupError as e:
            errors.append("line %d: %s" % (block.first, e))
            return
    for f in figs:
        if not any(matches(f, v, s) for _, (v, s) in pools):
            errors.append("line %d: %s is not in %s" % (f.line, f.text, " ".join(specs)))


def check_region(lines, region, sources, write):
    """Returns (errors, replacement lines or None)."""
    spec, start, end = region
    if "#" not in spec or len(spec.split()) != 1:
        return ["line %d: a <!-- /figures --> region needs one PATH#GENERATOR source, got %r" % (
            start + 1, spec)], None
    try:
        # Generated lines take the opening comment's indentation (a list item's table).
        indent = lines[start][:len(lines[start]) - len(lines[start].lstrip())]
        want = [indent + w if w else w for w in sources.read(spec).rstrip("\n").split("\n")]
    except LookupError as e:
        return ["line %d: %s" % (start + 1, e)], None
    have = lines[start + 1:end]
    if have == want:
        return [], None
    if write:
        return [], want
    errs = ["line %d: the lines under <!-- figures: %s --> differ from its output (python3 "
            "tests/readme/readme_figures.py --write regenerates them):" % (start + 1, spec)]
    for k in range(max(len(have), len(want))):
        h = have[k] if k < len(have) else "(missing)"
        w = want[k] if k < len(want) else "(none)"
        if h != w:
            errs.append("line %d: README    %s" % (start + 2 + k, h.strip()))
            errs.append("line %d: generated %s" % (start + 2 + k, w.strip()))
    return errs, None


# "issue 45", "Issues 44 and 46", "issue-16" (a link anchor), "issue #45"; not the verb: "to
# issue 20 ops", "it issues 20 of them" (a plural is a citation only before "#" or a list).
ISSUE_CITATION = re.compile(r"(?<!\bto )\bissue[ _-]?#?\d+|\bissues[ _-]?(?:#\d+|\d+(?:,\s*\d+)*"
                            r",?\s+and\s+\d+)", re.I)
# "(#45)" in prose: a number after "#" that is neither a heading's anchor ("#6-crd"), a link
# target's ("design.md#6"), nor part of a word.
HASH_CITATION = re.compile(r"(?<![\w/.#&])#\d+(?![\w-])")
SESSION = re.compile(r"\bsessions?\b", re.I)


def citation_errors(lines):
    """Lines that cite an issue number or speak of sessions (see the module's "Citations")."""
    errors, fenced = [], False
    for n, line in enumerate(lines, 1):
        if FENCE.match(line):
            fenced = not fenced
        found = ISSUE_CITATION.findall(line)
        if not fenced:
            found += HASH_CITATION.findall(re.sub(r"`[^`]*`", " ", COMMENT.sub(" ", line)))
        for cite in found:
            errors.append("line %d: cites %r: no tracker is kept with the repository; link the "
                          "design section or the results file it means" % (n, cite))
        for word in SESSION.findall(line):
            errors.append("line %d: speaks of %r: say when and where by date and machine" % (
                n, word))
    return errors


def run(page, root, write=False, name=None):
    """Checks one page; returns (errors, blocks, generated regions). `name` is the page's path
    relative to the root, which decides its coverage (default: where `page` lies)."""
    with open(page, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if name is None:
        name = os.path.relpath(os.path.abspath(page), os.path.abspath(root))
    blocks, regions, errors = parse(lines)
    errors += citation_errors(lines)
    covered = Coverage(name.replace(os.sep, "/"), lines)
    errors += covered.errors
    sources = Sources(root)
    for b in blocks:
        check_block(b, sources, errors, covered)
    for region in reversed(regions):
        errs, new = check_region(lines, region, sources, write)
        errors += errs
        if new is not None:
            lines[region[1] + 1:region[2]] = new
    if write:
        with open(page, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
    return errors, len(blocks), len(regions)


def pages_of(paths):
    """The pages named: files as given, folders as every .md file under them, sorted."""
    out = []
    for path in paths:
        if os.path.isdir(path):
            out += sorted(os.path.join(d, n) for d, _, names in os.walk(path)
                          for n in names if n.endswith(".md"))
        else:
            out.append(path)
    return out


def check_pages(paths, root, write=False, out=sys.stdout):
    """Checks every page; prints one line per page (and its errors); returns the exit code."""
    failed = []
    for page in pages_of(paths):
        shown = os.path.relpath(os.path.abspath(page), os.path.abspath(root))
        try:
            errors, nblocks, nregions = run(page, root, write)
        except OSError as e:
            errors, nblocks, nregions = [str(e)], 0, 0
        for e in errors:
            # "line N: ..." prints as "PAGE:N: ...", which editors and terminals open at N.
            at = re.match(r"line (\d+): ", e)
            print("%s:%s: %s" % (shown, at.group(1), e[at.end():]) if at else
                  "%s: %s" % (shown, e), file=out)
        if errors:
            failed.append(shown)
        else:
            print("OK: %s: %d blocks, %d generated regions, every figure in its source" % (
                shown, nblocks, nregions), file=out)
    if failed:
        print("FAILED: %s: figures not in their files, or citations (lines above)" %
              ", ".join(failed),
              file=out)
        return 1
    return 0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.normpath(os.path.join(here, "..", ".."))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("pages", nargs="*", help="pages or folders of pages (default: README.md "
                   "and docs/ of this repository)")
    p.add_argument("--root", help="repository root, where SOURCE paths start (default: the "
                   "repository holding this script)")
    p.add_argument("--write", action="store_true", help="regenerate the generated regions")
    args = p.parse_args()
    root = args.root or repo
    pages = args.pages or [os.path.join(root, TOP_README), os.path.join(root, "docs")]
    return check_pages(pages, root, args.write)


if __name__ == "__main__":
    sys.exit(main())

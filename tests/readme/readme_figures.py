#!/usr/bin/env python3
"""README figures against the results files they come from (issue 37).

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

SOURCE is a file or folder relative to the repository root (a folder: every text file under
it, .tgz archives included), or PATH#GENERATOR: a function of readme_generators.py applied to
PATH, for tables and for figures derived from a file (the checker recomputes them). A new
results section: cite its file in each paragraph, table and list item that quotes it.

Numbers compare after normalising their form: thousands separators, signs (+, -, U+2212),
units and "x"/"×" suffixes are dropped. A README figure matches a file figure that rounds to
it at the README's precision (197 matches 197.4, 0.03 matches 0.026), one 1000 times smaller
or larger (0.87 µs matches 867.8 ns), a size in KiB/MiB/GiB given in bytes (64 MiB matches
67108864), and `time`'s 0m16.630s as 16.630. Versions (2.28.3) must occur as written. Not
figures: numbers in link targets, after "§" or "issue", after a comparison sign (≥ 95 %,
< 100 µs: bars and thresholds), and in `code spans` (commands, choice names) except their
decimals in an annotated block (sample output). Fenced code is checked only where annotated.

Each number is looked up alone: a range whose two ends both occur somewhere in the cited
file passes, so cite the narrowest file, and derive ranges with a generator.

Coverage: every block with a number in the sections named in CHECKED_SECTIONS (and their
subsections) must carry an annotation, so a new figure without a source fails.

  python3 tests/readme/readme_figures.py [--write] [README.md]
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

# Headings (prefixes) whose sections hold measured figures; subsections are included.
CHECKED_SECTIONS = ("Quickstart", "Worked example", "Tuning cost: the adaptive search",
                    "Using the winners", "Measured results", "Layout", "Not done yet")

ANNOTATION = re.compile(r"<!--\s*figures:\s*(.*?)\s*-->")
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


def checked(section):
    top = section.split(" > ")
    return any(s.startswith(CHECKED_SECTIONS) for s in top)


def check_block(block, sources, errors):
    specs = [s for text in block.sources for s in text.split()]
    figs = block_figures(block, bool(specs))
    if specs == ["setting"]:
        return
    if "setting" in specs:
        errors.append("line %d: 'setting' cannot be combined with sources" % block.first)
        return
    if not specs:
        if figs and checked(block.section) and block.kind != "code":
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


def run(readme, root, write=False):
    with open(readme, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks, regions, errors = parse(lines)
    sources = Sources(root)
    for b in blocks:
        check_block(b, sources, errors)
    for region in reversed(regions):
        errs, new = check_region(lines, region, sources, write)
        errors += errs
        if new is not None:
            lines[region[1] + 1:region[2]] = new
    if write:
        with open(readme, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
    return errors, len(blocks), len(regions)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("readme", nargs="?",
                   default=os.path.normpath(os.path.join(here, "..", "..", "README.md")))
    p.add_argument("--root", help="repository root (default: the README's folder)")
    p.add_argument("--write", action="store_true", help="regenerate the generated regions")
    args = p.parse_args()
    root = args.root or os.path.dirname(os.path.abspath(args.readme))
    errors, nblocks, nregions = run(args.readme, root, args.write)
    for e in errors:
        print("%s: %s" % (args.readme, e))
    if errors:
        print("FAILED: %s: figures not in their files (lines above)" % args.readme)
        return 1
    print("OK: %s: %d blocks, %d generated regions, every figure in its source" % (
        args.readme, nblocks, nregions))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""One nccl-tests output file (all_reduce_perf and its siblings) read into rows: the one parser
the table scripts share (compare_with_nccl_tests.py, nccl_shim_table.py, nccl_onepro_table.py).

A data row is `size count type redop root` then, out of place, `time algbw busbw #wrong` and,
in place, the same four. #wrong is "N/A" without -c 1 (None here); the in-place fields are
None where a row stops after the out-of-place columns. Other lines (headers, comments, the
library's own lines) are skipped.

    read(path) -> {size in bytes: Row}
"""
from collections import namedtuple

Row = namedtuple("Row", "out_us out_busbw out_wrong in_us in_busbw in_wrong")


def _count(text):
    return int(text) if text.isdigit() else None


def parse_line(line):
    """(size, Row) of one data row, or None for any other line."""
    t = line.split()
    if len(t) < 8 or not (t[0].isdigit() and t[1].isdigit()):
        return None
    try:
        out_us, out_busbw = float(t[5]), float(t[7])
        in_us = float(t[9]) if len(t) >= 12 else None
        in_busbw = float(t[11]) if len(t) >= 12 else None
    except ValueError:
        return None
    return int(t[0]), Row(out_us, out_busbw, _count(t[8]) if len(t) > 8 else None,
                          in_us, in_busbw, _count(t[12]) if len(t) > 12 else None)


def read(path):
    rows = {}
    with open(path) as f:
        for line in f:
            parsed = parse_line(line)
            if parsed:
                rows[parsed[0]] = parsed[1]
    return rows

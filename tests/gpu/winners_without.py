#!/usr/bin/env python3
"""A winners file without some measured choices at some sizes: an A/B of what the runtime
runs there, on the same tune (issue 43).

    winners_without.py IN.json OUT.json --bytes 524288[,...] --drop PATTERN

IN.json is `ccltune export --format json`. In the records of the given sizes, every choice
whose name matches PATTERN (fnmatch) leaves the choices list, and the winner becomes the
fastest remaining choice with status ok (its time, speedup and bus bandwidth with it). Other
records are copied as they are. Prints one line per changed record.
"""
import argparse
import fnmatch
import json
import sys


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("--bytes", required=True, help="sizes in bytes, comma separated")
    p.add_argument("--drop", required=True, help="fnmatch pattern of choice names to drop")
    a = p.parse_args(argv)
    sizes = {int(x) for x in a.bytes.split(",")}
    with open(a.src) as f:
        records = json.load(f)
    for r in records:
        if r["bytes"] not in sizes:
            continue
        r["choices"] = [c for c in r["choices"] if not fnmatch.fnmatch(c["name"], a.drop)]
        ok = [c for c in r["choices"] if c["status"] == "ok"]
        if not ok:
            sys.exit("%d bytes: no choice left after dropping %s" % (r["bytes"], a.drop))
        best = min(ok, key=lambda c: c["timeUs"])
        r["winner"], r["timeUs"] = best["name"], best["timeUs"]
        r["winnerParams"] = best.get("params", {})
        r["busbwGBs"] = best.get("busbwGBs", 0.0)
        if r.get("defaultTimeUs"):
            r["speedupVsDefault"] = r["defaultTimeUs"] / best["timeUs"]
        print("%d bytes: winner %s %.2f us" % (r["bytes"], best["name"], best["timeUs"]))
    with open(a.dst, "w") as f:
        json.dump(records, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

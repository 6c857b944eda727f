#!/usr/bin/env python3
"""Where a decode step's all-reduces spend their time (issue 45), from a real Prometheus.

  telemetry_decode_table.py PROM_URL POD

Per size bucket and choice of our kernels (method "kernel"): calls, mean collective time,
the share of it that is sync wait (entry to the last peer's arrival) and transfer, and the
mean transfer against the tuned time of that choice at that size (ccltune_program_tuned_seconds,
which the runtime sets from the winners it loaded). Only the series of pod label POD: the
decode run's processes, not the other programs Prometheus scraped.
"""
import json
import sys
import urllib.parse
import urllib.request


def query(prom, expr):
    url = prom + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)["data"]["result"]


def by_size_choice(prom, expr):
    return {(s["metric"].get("size", "?"), s["metric"].get("choice", "?")): float(s["value"][1])
            for s in query(prom, expr)}


def main():
    prom, pod = sys.argv[1], sys.argv[2]
    last = "sum by (size, choice) (last_over_time(%s[30m]))"
    m = '{method="kernel", pod="%s"}' % pod
    calls = by_size_choice(prom, last % ("ccltune_program_sync_wait_seconds_count" + m))
    wait = by_size_choice(prom, last % ("ccltune_program_sync_wait_seconds_sum" + m))
    xfer = by_size_choice(prom, last % ("ccltune_program_transfer_seconds_sum" + m))
    tuned = by_size_choice(prom, 'max by (size, choice) (last_over_time('
                                 'ccltune_program_tuned_seconds{pod="%s"}[30m]))' % pod)
    print("| size | choice | calls | mean call (µs) | sync wait | transfer | mean transfer (µs) | "
          "tuned (µs) | transfer / tuned |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key in sorted(calls, key=lambda k: (len(k[0]), k)):
        n = calls[key]
        if n <= 0:
            continue
        w, x = wait.get(key, 0.0), xfer.get(key, 0.0)
        total = w + x
        t = tuned.get(key)
        print("| %s | %s | %d | %.1f | %.0f%% | %.0f%% | %.1f | %s | %s |" % (
            key[0], key[1], n, total / n * 1e6, 100 * w / total if total else 0,
            100 * x / total if total else 0, x / n * 1e6, "%.1f" % (t * 1e6) if t else "—",
            "%.2f" % (x / n / t) if t else "—"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""200 pod creations at once through the simulator's admission into the real controller's
webhook (issue 46): prints each figure and writes them to tests/bench/results/admission-load.txt.

Two views of the same webhook: (1) as the API server sees it, the simulator's own timing of
each webhook call (connect, TLS handshake, AdmissionReview, answer), for N labelled pods
created by N threads at once; (2) the webhook alone, N AdmissionReviews POSTed at once over
HTTPS by N threads. A benchmark, not a test: it prints, it does not assert.

  CCLTUNE_CONTROLLER_BIN=build/controller/ccltune-controller /usr/bin/python3 tests/bench/admission_load.py [N]
"""

import http.client
import json
import os
import ssl
import base64
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'k8s'))
from inject_fixture import InjectEnv, pod  # noqa: E402


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def at_once(n, fn):
    """Runs fn(i) on n threads released together; returns the results in order."""
    out, go = [None] * n, threading.Event()

    def run(i):
        go.wait()
        out[i] = fn(i)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    go.set()
    for t in threads:
        t.join(timeout=120)
    return out


def through_the_simulator(env, n):
    t0 = time.monotonic()
    codes = at_once(n, lambda i: env.api('POST', '/api/v1/namespaces/team-a/pods', pod('load-%d' % i, inject='plugin.preload'))[0])
    wall = time.monotonic() - t0
    ms = [r['ms'] for r in env.admission_records() if 'ms' in r]
    failed = [r for r in env.admission_records() if 'error' in r]
    return codes, wall, ms, failed


def direct(env, n):
    ctx = ssl.create_default_context(cadata=base64.b64decode(env.ca_bundle()).decode())
    body = json.dumps({'apiVersion': 'admission.k8s.io/v1', 'kind': 'AdmissionReview',
                       'request': {'uid': 'u', 'operation': 'CREATE', 'object': pod('d', inject='plugin.preload'),
                                   'kind': {'group': '', 'version': 'v1', 'kind': 'Pod'}}}).encode()

    def one(i):
        t = time.monotonic()
        c = http.client.HTTPSConnection('127.0.0.1', env.port, timeout=10, context=ctx)
        c.request('POST', '/mutate-pods', body=body, headers={'Content-Type': 'application/json'})
        r = c.getresponse()
        r.read()
        c.close()
        return r.status, (time.monotonic() - t) * 1000
    return at_once(n, one)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    env = InjectEnv()
    lines = []
    try:
        codes, wall, ms, failed = through_the_simulator(env, n)
        lines.append('pods created at once through the simulator: %d (HTTP 201: %d), wall %.2f s' %
                     (n, codes.count(201), wall))
        lines.append('webhook calls as the API server timed them: %d, failed open: %d' % (len(ms), len(failed)))
        if ms:
            lines.append('  p50 %.1f ms, p99 %.1f ms, max %.1f ms, over 100 ms: %d' %
                         (pct(ms, 50), pct(ms, 99), max(ms), sum(1 for x in ms if x > 100)))
        got = direct(env, n)
        dms = [m for s, m in got if s == 200]
        lines.append('AdmissionReviews POSTed at once straight to the webhook: %d (HTTP 200: %d)' % (n, len(dms)))
        if dms:
            lines.append('  p50 %.1f ms, p99 %.1f ms, max %.1f ms, over 100 ms: %d' %
                         (pct(dms, 50), pct(dms, 99), max(dms), sum(1 for x in dms if x > 100)))
    finally:
        env.close()
    head = 'admission_load.py %d on %d CPU(s), %s' % (n, os.cpu_count(), time.strftime('%Y-%m-%d %H:%M'))
    text = '\n'.join([head] + lines) + '\n'
    sys.stdout.write(text)
    out = os.path.join(HERE, 'results', 'admission-load.txt')
    with open(out, 'w') as f:
        f.write(text)


if __name__ == '__main__':
    main()

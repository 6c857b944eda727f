"""Bad HTTP against one server, for the abuse tests of the controller's port
(tests/k8s/test_controller_http_abuse.py) and of a worker's metrics port
(tests/metrics/test_worker_http_abuse.py): raw sockets, so that a probe can send what no HTTP
client library would (a 64 KiB header, a broken escape, one byte a second).

A probe's Outcome says what the server did and when: answered with a status code, or closed
the connection without one, or neither before the probe's bound. The tests assert the exact
answer docs/metrics.md promises for each probe (`standard_codes()`, `unexpected()`);
`acceptable()` without a code is issue 24's looser rule (a 4xx or a close within the bound).
"""

import collections
import math
import selectors
import socket
import sys
import time

Outcome = collections.namedtuple('Outcome', 'name code closed seconds')


def bounds(threads, request_timeout_s, idle):
    """(probe bound, idle bound) in seconds for a thread-per-connection server (civetweb): one
    probe at a time is answered or closed after the request timeout (8 s of slack for a loaded
    2-core machine); `idle` silent connections are closed `threads` at a time, one wave per
    request timeout."""
    probe = request_timeout_s + 8
    return probe, math.ceil(idle / threads) * request_timeout_s + 10


CLOSED = 'closed'  # an expected outcome: the connection closed without an answer


def acceptable(outcome, bound, code=None):
    """Within `bound` seconds: exactly `code` (a status, or CLOSED) when given; else a 4xx, or
    a close without an answer."""
    in_time = outcome.seconds <= bound
    if code == CLOSED:
        return in_time and outcome.code is None and outcome.closed
    if code is not None:
        return in_time and outcome.code == code
    return in_time and (outcome.code is not None and 400 <= outcome.code < 500 or
                        outcome.code is None and outcome.closed)


def standard_codes(escape_codes, post_code):
    """The answer to each probe of standard_probes() by its name, as civetweb gives them behind
    both servers (docs/metrics.md, "How metrics and HTTP are served"): 400 for a head over the limit and
    for a head that does not arrive within the request timeout, 404 for an unknown path, 405
    for DELETE; `escape_codes` maps each malformed-escape target to its answer, `post_code` is
    POST's (the servers differ there)."""
    codes = {'8 KiB URL': 400, '64 KiB header': 400, 'unknown path': 404, 'POST': post_code,
             'DELETE': 405, 'one byte a second': 400}
    codes.update({'escape %s' % t: c for t, c in escape_codes.items()})
    return codes


def unexpected(outcomes, codes, bound):
    """describe() of each outcome that is not exactly codes[its name] within `bound` (a probe
    without an expected code is unexpected too); [] when every answer is as promised."""
    return ['%s (expected %s)' % (describe(o), codes.get(o.name, 'a code to be given'))
            for o in outcomes if not acceptable(o, bound, codes.get(o.name, -1))]


def describe(outcome):
    what = 'HTTP %d' % outcome.code if outcome.code else ('closed' if outcome.closed else 'OPEN')
    return '%-28s %-10s after %.2f s' % (outcome.name, what, outcome.seconds)


def request(method, target, extra_headers=''):
    return ('%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n' % (method, target, extra_headers)).encode()


def standard_probes(long_url_prefix, bad_escape_targets, unknown_path, known_path):
    """(name, payload, seconds between bytes or 0) for every probe of the issue but the idle
    flood: an 8 KiB URL, a 64 KiB header, malformed percent-escapes, an unknown path, POST and
    DELETE, and a client that sends one byte a second."""
    url = long_url_prefix + 'a' * (8192 - len(long_url_prefix))
    probes = [('8 KiB URL', request('GET', url), 0),
              ('64 KiB header', request('GET', known_path, 'X-Big: %s\r\n' % ('b' * 65536)), 0)]
    probes += [('escape %s' % t, request('GET', t), 0) for t in bad_escape_targets]
    probes += [('unknown path', request('GET', unknown_path), 0),
               ('POST', request('POST', known_path, 'Content-Length: 2\r\n') + b'{}', 0),
               ('DELETE', request('DELETE', known_path), 0),
               ('one byte a second', request('GET', known_path, 'X-Slow: %s\r\n' % ('s' * 64)), 1.0)]
    return probes


def run(port, probes, bound):
    """exchange() for each (name, payload, drip) of `probes`, one after the other."""
    return [exchange(port, name, payload, bound, drip) for name, payload, drip in probes]


def report(title, outcomes, closed_after, idle_bound):
    """Writes one line per outcome and one for the idle connections to stderr (the test's
    record); returns how many idle connections were closed."""
    done = [t for t in closed_after if t is not None]
    lines = [describe(o) for o in outcomes]
    lines.append('%d idle connections: %d closed, the last after %.1f s (bound %d s)' %
                 (len(closed_after), len(done), max(done or [0]), idle_bound))
    sys.stderr.write(title + ':\n  ' + '\n  '.join(lines) + '\n')
    return len(done)


def _status_code(data):
    """The code of an HTTP status line at the start of `data`, else None."""
    parts = data.split(b'\r\n', 1)[0].split(b' ')
    if len(parts) >= 2 and parts[0].startswith(b'HTTP/') and parts[1].isdigit():
        return int(parts[1])
    return None


def _read_some(sock):
    """(bytes, closed) of one non-blocking read; a reset counts as closed."""
    try:
        data = sock.recv(65536)
        return data, not data
    except BlockingIOError:
        return b'', False
    except OSError:
        return b'', True


def exchange(port, name, payload, bound, drip=0.0):
    """Sends `payload` (all at once, or one byte every `drip` s) and reads until the server
    closes or `bound` s pass. A send that fails because the server closed ends the sending,
    not the reading: an answer the server sent before it closed (a 400 to a head over the
    limit, while the rest of the head is still on its way) is still read."""
    start = time.monotonic()
    sock = socket.create_connection(('127.0.0.1', port), timeout=bound)
    sock.setblocking(False)
    received, closed, sent, sending = b'', False, 0, True
    with sock, selectors.DefaultSelector() as sel:
        sel.register(sock, selectors.EVENT_READ)
        while not closed and time.monotonic() - start < bound:
            if sending and sent < len(payload):
                chunk = payload[sent:sent + 1] if drip else payload[sent:]
                try:
                    sent += sock.send(chunk)
                except BlockingIOError:
                    pass
                except OSError:
                    sending = False
            wait = drip if drip and sending and sent < len(payload) else 0.05
            for _ in sel.select(timeout=min(wait, max(0.0, bound - (time.monotonic() - start)))):
                data, closed = _read_some(sock)
                received += data
    return Outcome(name, _status_code(received), closed, time.monotonic() - start)


def hold_idle(port, count):
    """`count` connections that never send a byte (non-blocking connects, so connections the
    listen backlog cannot take yet do not hold the caller up)."""
    socks = []
    for _ in range(count):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(('127.0.0.1', port))
        socks.append(s)
    return socks


def wait_closed(socks, bound):
    """Seconds until the server closed each of `socks` (None: still open after `bound` s)."""
    start = time.monotonic()
    closed_after = [None] * len(socks)
    with selectors.DefaultSelector() as sel:
        for i, s in enumerate(socks):
            sel.register(s, selectors.EVENT_READ, i)
        left = len(socks)
        while left and time.monotonic() - start < bound:
            for key, _ in sel.select(timeout=0.2):
                _, closed = _read_some(key.fileobj)
                if closed:  # any answer without a close is not the end yet
                    closed_after[key.data] = time.monotonic() - start
                    sel.unregister(key.fileobj)
                    left -= 1
    for s in socks:
        s.close()
    return closed_after

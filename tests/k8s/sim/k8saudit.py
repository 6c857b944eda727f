"""Audit log: one audit.k8s.io/v1 Event per API request at level Metadata, as kube-apiserver's
audit backend records them (who, verb, object, response code, when), kept in memory so tests
can ask which client sent which write (GET /_sim/audit). Bounded: the oldest go first."""

import collections
import datetime
import threading
import uuid

MAX_EVENTS = 100000


def _micro_now():
    return datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.%fZ')


class AuditLog:
    def __init__(self, max_events=MAX_EVENTS):
        self.lock = threading.Lock()
        self.events = collections.deque(maxlen=max_events)
        self.total = 0      # events ever recorded: an event's index, for `since`

    def begin(self, method, uri, headers, client_ip):
        """Records a request as it arrives; the handler fills verb/objectRef and the response."""
        auth = headers.get('Authorization', '')
        user = {'username': 'ccltune-sim', 'groups': ['system:authenticated']} if auth.startswith('Bearer ') \
            else {'username': 'system:anonymous', 'groups': ['system:unauthenticated']}
        ev = {'kind': 'Event', 'apiVersion': 'audit.k8s.io/v1', 'level': 'Metadata',
              'auditID': str(uuid.uuid4()), 'stage': 'RequestReceived', 'requestURI': uri,
              'verb': method.lower(), 'user': user, 'sourceIPs': [client_ip],
              'userAgent': headers.get('User-Agent', ''), 'requestReceivedTimestamp': _micro_now()}
        with self.lock:
            self.events.append(ev)
            self.total += 1
        return ev

    @staticmethod
    def respond(ev, code):
        """The response's status line went out (a watch's stream only started)."""
        if ev is None or 'responseStatus' in ev:
            return
        ev['responseStatus'] = {'metadata': {}, 'code': code}
        ev['stage'] = 'ResponseStarted' if ev.get('verb') == 'watch' else 'ResponseComplete'
        ev['stageTimestamp'] = _micro_now()

    def since(self, index):
        """(events with index >= `index` still kept, the index the next event will get)."""
        with self.lock:
            first = self.total - len(self.events)
            items = list(self.events)[max(0, index - first):]
            return [dict(e) for e in items], self.total

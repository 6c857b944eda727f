"""Real Prometheus servers for the controller tests (no tests here): Debian's
`prometheus-pushgateway` and `prometheus` on free loopback ports, data in the test's directory,
each started with a readiness deadline and stopped by the test. Used by
test_controller_metrics.py."""

import json
import math
import os
import subprocess
import urllib.error
import urllib.parse
import urllib.request

from test_controller_common import free_port, wait_until


def http(method, url, timeout=10):
    """(code, body) of one request; code 0 when no answer came."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError as e:
        return 0, str(e)


class Server:
    """One server process on 127.0.0.1:port, its output in <dir>/<name>.log."""

    def __init__(self, name, workdir, port=None):
        self.name, self.dir = name, workdir
        self.port = port or free_port()
        self.url = 'http://127.0.0.1:%d' % self.port
        self.proc = None

    def start(self):
        log = open(os.path.join(self.dir, self.name + '.log'), 'a')
        self.proc = subprocess.Popen(self.argv(), stdout=log, stderr=subprocess.STDOUT)
        log.close()
        wait_until(lambda: self.proc.poll() is not None or http('GET', self.url + '/-/ready', 2)[0] == 200,
                   30, '%s ready on port %d' % (self.name, self.port))
        if self.proc.poll() is not None:
            raise AssertionError('%s exited: %s' % (self.name, self.log_tail()))
        return self

    def stop(self):
        """SIGTERM (a Pushgateway writes its persistence file then), SIGKILL after 10 s."""
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)

    def log_tail(self):
        with open(os.path.join(self.dir, self.name + '.log'), errors='replace') as f:
            return f.read()[-3000:]


class Pushgateway(Server):
    """Groups persist in <dir>/pushgateway.data across a stop and start on the same port (the
    Debian default path would be shared by every test on the machine)."""

    def __init__(self, workdir):
        super().__init__('pushgateway', workdir)

    def argv(self):
        return ['prometheus-pushgateway', '--web.listen-address=127.0.0.1:%d' % self.port,
                '--persistence.file=' + os.path.join(self.dir, 'pushgateway.data')]

    def groups(self):
        """The grouping labels of every group it holds (its /api/v1/metrics)."""
        code, body = http('GET', self.url + '/api/v1/metrics')
        if code != 200:
            raise AssertionError('pushgateway /api/v1/metrics: %d %s' % (code, body[:500]))
        return [g['labels'] for g in json.loads(body)['data']]

    def job_groups(self, job_id):
        return [g for g in self.groups() if g.get('ccltune_job') == job_id]


class Prometheus(Server):
    """Scrapes `targets` ({job name: port}) every second, honoring their labels as the chart's
    ServiceMonitors do (honorLabels: true)."""

    def __init__(self, workdir, targets):
        super().__init__('prometheus', workdir)
        jobs = ''.join(
            '- job_name: %s\n  honor_labels: true\n  static_configs:\n  - targets: [\'127.0.0.1:%d\']\n'
            % (name, port) for name, port in targets.items())
        self.config = os.path.join(workdir, 'prometheus.yml')
        with open(self.config, 'w') as f:
            f.write('global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}\n'
                    'scrape_configs:\n' + jobs)

    def argv(self):
        return ['prometheus', '--config.file=' + self.config,
                '--storage.tsdb.path=' + os.path.join(self.dir, 'prometheus-data'),
                '--web.listen-address=127.0.0.1:%d' % self.port, '--log.level=warn']

    def query(self, expr):
        """The series of an instant query at now: [(labels, value)], values finite-checked by
        the caller."""
        code, body = http('GET', self.url + '/api/v1/query?' + urllib.parse.urlencode({'query': expr}))
        answer = json.loads(body) if body.startswith('{') else {}
        if code != 200 or answer.get('status') != 'success':
            raise AssertionError('query %s: %d %s' % (expr, code, body[:500]))
        return [(r['metric'], float(r['value'][1])) for r in answer['data']['result']]


def finite(series):
    return [(labels, v) for labels, v in series if math.isfinite(v)]

#!/usr/bin/python3
"""injected_pod.py: an injected pod's two containers as runc bundle configs (issue 46).

  injected_pod.py init CONFIG POD.json VOLUME_DIR
  injected_pod.py main CONFIG POD.json VOLUME_DIR NODE ARGS...

POD.json is `ccltune-controller inject-pod` output: the pod as the webhook patches it. CONFIG
is the image bundle's config.json, rewritten in place for one container, doing what the kubelet
would for that pod: `init` runs the webhook's init container (its command, the shared emptyDir
at VOLUME_DIR mounted read-write where the init container mounts it); `main` runs ARGS as the
pod's first container with its injected environment resolved (values; spec.nodeName = NODE;
a secretKeyRef from $INJECT_SECRET_VALUE) and the volume mounted read-only where the webhook
put it. Both share the host's network (the test's Redis listens on its loopback).
"""
import json
import os
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def mount_of(container, volume):
    for m in container.get('volumeMounts', []):
        if m['name'] == volume:
            return m
    raise SystemExit('injected_pod.py: container %s does not mount %s' % (container['name'], volume))


def host_network(config):
    ns = config['linux']['namespaces']
    config['linux']['namespaces'] = [n for n in ns if n['type'] != 'network']


def bind(config, source, mount, read_only):
    options = ['rbind', 'ro' if read_only else 'rw', 'nosuid', 'nodev']
    config['mounts'].append({'destination': mount['mountPath'], 'type': 'bind',
                             'source': source, 'options': options})


def init_config(config, pod, volume_dir):
    init = next(c for c in pod['spec']['initContainers'] if c['name'] == 'ccltune-inject')
    volume = init['volumeMounts'][0]['name']
    config['process']['args'] = init['command']
    bind(config, volume_dir, mount_of(init, volume), read_only=False)


def resolve(entry, node):
    source = entry.get('valueFrom', {})
    if 'value' in entry:
        return entry['value']
    if 'secretKeyRef' in source:
        return os.environ['INJECT_SECRET_VALUE']
    if source.get('fieldRef', {}).get('fieldPath') == 'spec.nodeName':
        return node
    raise SystemExit('injected_pod.py: cannot resolve %s' % entry['name'])


def main_config(config, pod, volume_dir, node, args):
    init = next(c for c in pod['spec']['initContainers'] if c['name'] == 'ccltune-inject')
    volume = init['volumeMounts'][0]['name']
    container = pod['spec']['containers'][0]
    env = dict(e.split('=', 1) for e in config['process'].get('env', []))
    for entry in container.get('env', []):
        env[entry['name']] = resolve(entry, node)
    config['process']['env'] = ['%s=%s' % kv for kv in env.items()]
    config['process']['args'] = args
    bind(config, volume_dir, mount_of(container, volume), read_only=True)


def run():
    what, config_path, pod_path, volume_dir = sys.argv[1:5]
    config, pod = load(config_path), load(pod_path)
    config['process']['terminal'] = False
    host_network(config)
    if what == 'init':
        init_config(config, pod, volume_dir)
    elif what == 'main':
        main_config(config, pod, volume_dir, sys.argv[5], sys.argv[6:])
    else:
        raise SystemExit(__doc__)
    with open(config_path, 'w') as f:
        json.dump(config, f)


if __name__ == '__main__':
    run()

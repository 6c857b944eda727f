#!/usr/bin/python3
"""An injected pod's environment outside a cluster (issue 46), from the webhook's own patch.

  inject_env.py redis-command DIR PORT
      The Redis of manifests/redis/deployment.yaml (its ACL users, one per role) as a shell
      command for `sh -c`, data in DIR, on PORT; it reads REDIS_PASSWORD, READER_PASSWORD and
      TELEMETRY_PASSWORD from the environment, as the manifest does.
  inject_env.py render POD.json LIBDIR ROOT NODE
      POD.json is `ccltune-controller inject-pod` output (the pod as the webhook patches it).
      Does what the kubelet would: runs the init container's copy with its source folder read
      from LIBDIR and the volume at ROOT, then prints the first container's environment as
      NAME=VALUE lines, the mount path rewritten to ROOT, spec.nodeName = NODE, and the
      Secret's value from INJECT_SECRET_VALUE.
"""
import json
import os
import shutil
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, '..', '..'))


def redis_command(data_dir, port):
    with open(os.path.join(REPO, 'manifests', 'redis', 'deployment.yaml')) as f:
        dep = yaml.safe_load(f)
    cmd = dep['spec']['template']['spec']['containers'][0]['command'][2]
    assert ' --dir /data' in cmd, 'manifests/redis/deployment.yaml: no --dir /data in the command'
    return cmd.replace(' --dir /data', " --dir '%s' --port %d --bind 127.0.0.1 --save '' --appendonly no" % (data_dir, port))


def render(pod_path, lib_dir, root, node):
    with open(pod_path) as f:
        pod = json.load(f)
    spec = pod['spec']
    mount = None
    for init in spec.get('initContainers', []):
        if init['name'] != 'ccltune-inject':
            continue
        *sources, dest = init['command'][2:]          # cp -L SRC... DEST
        mount = dest.rstrip('/')
        os.makedirs(root, exist_ok=True)
        for src in sources:
            shutil.copy(os.path.join(lib_dir, os.path.basename(src)), root)
    out = []
    for e in spec['containers'][0].get('env', []):
        if 'value' in e:
            v = e['value']
        elif 'secretKeyRef' in e.get('valueFrom', {}):
            v = os.environ.get('INJECT_SECRET_VALUE', '')
        elif e.get('valueFrom', {}).get('fieldRef', {}).get('fieldPath') == 'spec.nodeName':
            v = node
        elif e.get('valueFrom', {}).get('fieldRef', {}).get('fieldPath') == 'metadata.name':
            v = pod['metadata']['name']
        elif e.get('valueFrom', {}).get('fieldRef', {}).get('fieldPath') == 'metadata.namespace':
            v = pod['metadata'].get('namespace', 'default')
        else:
            raise SystemExit('inject_env.py: cannot resolve %s' % e['name'])
        if mount:
            v = v.replace(mount + '/', root.rstrip('/') + '/')
        out.append('%s=%s' % (e['name'], v))
    print('\n'.join(out))


if __name__ == '__main__':
    if sys.argv[1:2] == ['redis-command']:
        print(redis_command(sys.argv[2], int(sys.argv[3])))
    elif sys.argv[1:2] == ['render']:
        render(*sys.argv[2:6])
    else:
        raise SystemExit(__doc__)

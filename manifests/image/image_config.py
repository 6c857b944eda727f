#!/usr/bin/env python3
"""image_config.py CONTAINERFILE TARGET [NAME=VALUE...]

Prints, one per line, the `umoci config` flags that give an image the LABEL, ENV, WORKDIR,
USER, ENTRYPOINT and CMD of TARGET in the Containerfile, following its FROM chain through
the file's own stages (cuda -> runtime). build-image.sh applies them, so `make image` and
`docker build` agree on the image config without a second copy of it. NAME=VALUE overrides
an ARG default (VERSION, REVISION, CREATED). Only the subset the Containerfile uses is
understood; anything else in a runtime stage is an error, not a silent difference.
"""
import json
import re
import shlex
import sys

CONFIG = ('LABEL', 'ENV', 'WORKDIR', 'USER', 'ENTRYPOINT', 'CMD')
SKIPPED = ('ARG', 'COPY', 'RUN', 'FROM')  # file content, built by the scripts instead


def instructions(path):
    """(keyword, rest) per instruction: comments dropped, continuation lines joined."""
    joined = ''
    for raw in open(path, encoding='utf-8'):
        line = raw.rstrip('\n')
        if not joined and (not line.strip() or line.lstrip().startswith('#')):
            continue
        if line.endswith('\\'):
            joined += line[:-1] + ' '
            continue
        keyword, _, rest = (joined + line).strip().partition(' ')
        joined = ''
        yield keyword.upper(), rest.strip()


def parse_stages(path):
    """Global ARG defaults, and per stage name: (base, ARG defaults, instructions)."""
    global_args, stages, current = {}, {}, None
    for keyword, rest in instructions(path):
        if keyword == 'FROM':
            m = re.fullmatch(r'(\S+)\s+AS\s+(\S+)', rest, re.IGNORECASE)
            if not m:
                sys.exit('image_config.py: every FROM needs "AS name": ' + rest)
            current = {'base': m.group(1), 'args': {}, 'body': []}
            stages[m.group(2)] = current
        elif keyword == 'ARG':
            name, _, default = rest.partition('=')
            (current['args'] if current else global_args)[name] = default
        elif current is not None:
            current['body'].append((keyword, rest))
    return global_args, stages


def substitute(text, values):
    return re.sub(r'\$\{(\w+)\}|\$(\w+)', lambda m: values.get(m.group(1) or m.group(2), ''), text)


def flags_for(stage, values):
    out = []
    for keyword, rest in stage['body']:
        if keyword in SKIPPED:
            continue
        if keyword not in CONFIG:
            sys.exit('image_config.py: %s is not understood in a runtime stage' % keyword)
        text = substitute(rest, values)
        if keyword in ('LABEL', 'ENV'):
            flag = '--config.label' if keyword == 'LABEL' else '--config.env'
            out += ['%s=%s' % (flag, pair) for pair in shlex.split(text)]
        elif keyword == 'WORKDIR':
            out.append('--config.workingdir=' + text)
        elif keyword == 'USER':
            out.append('--config.user=' + text)
        else:  # ENTRYPOINT, CMD: exec (JSON) form only, as in the Containerfile
            flag = '--config.entrypoint' if keyword == 'ENTRYPOINT' else '--config.cmd'
            out += ['%s=%s' % (flag, arg) for arg in json.loads(text)]
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    path, target = sys.argv[1], sys.argv[2]
    overrides = dict(a.split('=', 1) for a in sys.argv[3:])
    global_args, stages = parse_stages(path)
    chain = []
    name = target
    while name in stages:
        chain.insert(0, stages[name])
        name = stages[name]['base']
    if not chain:
        sys.exit('image_config.py: no stage %r in %s' % (target, path))
    for stage in chain:
        values = {**global_args, **stage['args'], **overrides}
        for line in flags_for(stage, values):
            print(line)


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""Checks that includes run one way: each folder includes only itself and the folders its
rule lists (issue 42). A file that includes a folder above it, or a folder the table does not
know, fails the check with the file, the line and the folders it may include.

  python3 tests/layering/check_includes.py [REPO_ROOT]
"""

import os
import re
import sys

# Folder (the longest matching prefix wins) -> the folders its files may include besides
# their own. Folders are repository paths; "core/base" allows "core/base/..." alone.
CORE_ALL = ["core/base", "core/plan", "core/redis", "core/results", "core/search", "core/node",
            "core/peers", "core/metrics", "core/apply", "core/telemetry"]
RULES = {
    "core/base": [],
    "core/plan": ["core/base"],
    "core/redis": ["core/base"],
    "core/results": ["core/base", "core/plan", "core/redis"],
    "core/search": ["core/base", "core/plan", "core/results"],
    "core/node": ["core/base"],
    "core/peers": ["core/base"],
    "core/metrics": ["core/base"],
    "core/apply": ["core/base", "core/plan", "core/redis", "core/results"],
    "core/telemetry": ["core/base", "core/redis", "core/metrics"],
    "core/kernels": ["core/plan"],
    "core/gpu": ["core/base", "core/plan", "core/node", "core/peers", "core/apply",
                 "core/kernels"],
    # The four programs link core's libraries and never reach into each other.
    "worker": CORE_ALL + ["core/kernels", "core/gpu"],
    "plugin": CORE_ALL + ["core/gpu", "core/telemetry"],
    "runtime": CORE_ALL + ["core/kernels", "core/gpu"],
    # The controller, from its wiring (app/) down to the API server's client (kube/).
    "controller/kube": ["core/base"],
    "controller/machinery": ["controller/kube"] + CORE_ALL,
    "controller/job": ["controller/kube"] + CORE_ALL,
    "controller/cache": CORE_ALL,
    "controller/metrics": CORE_ALL,
    "controller/reconcile": ["controller/kube", "controller/job", "controller/cache",
                             "controller/metrics"] + CORE_ALL,
    # The webhook's pure patch logic, and its certificates (OpenSSL; the rotator's Secret).
    "controller/admission": ["controller/kube"] + CORE_ALL,
    "controller/certs": ["controller/kube"] + CORE_ALL,
    "controller/http": ["controller/cache", "controller/certs"] + CORE_ALL,
    "controller/app": ["controller/kube", "controller/machinery", "controller/job",
                       "controller/cache", "controller/metrics", "controller/reconcile",
                       "controller/http", "controller/admission", "controller/certs"] + CORE_ALL,
}
SOURCE = re.compile(r"\.(h|cc|cu|cuh)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
OURS = ("core/", "worker/", "controller/", "plugin/", "runtime/", "tests/")


def RuleOf(path):
  """The longest folder of RULES that holds `path`, or None."""
  best = None
  for folder in RULES:
    if path.startswith(folder + "/") and (best is None or len(folder) > len(best)):
      best = folder
  return best


def FolderOf(path):
  """The folder of RULES an included path lies in (the longest prefix), or its own folder."""
  return RuleOf(path) or os.path.dirname(path)


def Violations(root):
  found = []
  for folder in sorted({f.split("/")[0] for f in RULES}):
    for dirpath, _, names in os.walk(os.path.join(root, folder)):
      for name in sorted(names):
        if not SOURCE.search(name):
          continue
        path = os.path.relpath(os.path.join(dirpath, name), root)
        rule = RuleOf(path)
        if rule is None:
          found.append(f"{path}: its folder has no layering rule (add it to {__file__})")
          continue
        allowed = [rule] + RULES[rule]
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
          for lineno, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m or not m.group(1).startswith(OURS):
              continue
            target = FolderOf(m.group(1))
            if not any(target == a or target.startswith(a + "/") for a in allowed):
              found.append(f"{path}:{lineno}: includes {m.group(1)} ({target}); "
                           f"{rule}/ may include {', '.join(allowed)}")
  return found


def main():
  root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
  found = Violations(os.path.abspath(root))
  for v in found:
    print(v)
  print(f"layering: {len(found)} include(s) against the rules")
  return 1 if found else 0


if __name__ == "__main__":
  sys.exit(main())

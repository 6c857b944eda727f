#!/usr/bin/env python3
"""The layering check on small trees: it passes a downward include and fails an upward one,
an include across programs and a folder without a rule."""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_includes  # noqa: E402


def Tree(files):
  root = tempfile.mkdtemp()
  for path, text in files.items():
    os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
    with open(os.path.join(root, path), "w") as f:
      f.write(text)
  return root


class CheckIncludesTest(unittest.TestCase):
  def test_downward_includes_pass(self):
    root = Tree({"core/plan/plan.h": '#include "core/base/status.h"\n#include <string>\n',
                 "worker/cli/main.cc": '#include "core/plan/plan.h"\n#include "worker/x.h"\n'})
    self.assertEqual(check_includes.Violations(root), [])

  def test_upward_include_fails_naming_file_line_and_rule(self):
    root = Tree({"core/base/log.cc": '// log\n#include "core/plan/plan.h"\n'})
    found = check_includes.Violations(root)
    self.assertEqual(len(found), 1)
    self.assertIn("core/base/log.cc:2: includes core/plan/plan.h", found[0])

  def test_program_reaching_into_another_fails(self):
    root = Tree({"runtime/init.cc": '#include "worker/rank/backend.h"\n'})
    self.assertEqual(len(check_includes.Violations(root)), 1)

  def test_folder_without_rule_fails(self):
    root = Tree({"core/newthing/a.cc": '#include "core/base/status.h"\n'})
    self.assertIn("no layering rule", check_includes.Violations(root)[0])


if __name__ == "__main__":
  unittest.main()

#!/usr/bin/env python3
"""The documentation-commands check fails where it should: a command in neither table, a
stale table entry, a command that exits non-zero, a console block whose output does not show.
No build needed: the runs here use bash built-ins in a temporary folder.
"""
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import docs_commands as dc  # noqa: E402

PAGE = """# Guide

```sh
ccltune tune --op allReduce \\
  --sizes 4KiB   # a comment
# a comment line
x=5
```

```yaml
not: a command
```

1. A step:

   ```bash
   echo "# not a comment" # a comment
   ```

```console
$ ccltune results
...
# nodes 2, 2 ranks per node
$ true
```
"""


class Extraction(unittest.TestCase):
    def test_commands_continuations_comments_and_console_output(self):
        cmds = dc.commands_of("docs/guide.md", PAGE)
        self.assertEqual([c.key for c in cmds], [
            "ccltune tune --op allReduce --sizes 4KiB", "x=5", 'echo "# not a comment"',
            "ccltune results", "true"])
        self.assertEqual([c.line for c in cmds], [4, 7, 17, 21, 24])
        self.assertEqual(cmds[3].expect, ["# nodes 2, 2 ranks per node"])
        self.assertEqual(cmds[4].expect, [])


class Classification(unittest.TestCase):
    def cmds(self):
        return dc.commands_of("docs/guide.md", PAGE)

    def test_every_command_in_a_table_passes(self):
        keys = [c.key for c in self.cmds()]
        self.assertEqual(dc.classify(self.cmds(), set(keys[:3]), {k: "why" for k in keys[3:]}),
                         [])

    def test_a_new_command_fails_naming_page_and_line(self):
        keys = [c.key for c in self.cmds()]
        errors = dc.classify(self.cmds(), set(keys[:2]), {k: "why" for k in keys[3:]})
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("docs/guide.md:17: a new command", errors[0])
        self.assertIn("echo", errors[0])

    def test_a_stale_entry_and_a_command_in_both_tables_fail(self):
        keys = [c.key for c in self.cmds()]
        errors = dc.classify(self.cmds(), set(keys) | {"ccltune gone"}, {keys[0]: "why"})
        self.assertEqual(len(errors), 2, errors)
        self.assertIn("docs/guide.md:4: 'ccltune tune --op allReduce --sizes 4KiB' is in both",
                      errors[0])
        self.assertIn("HERE names 'ccltune gone', which no page writes any more", errors[1])

    def test_the_real_pages_are_classified(self):
        self.assertEqual(dc.classify(dc.all_commands(dc.REPO)), [])


class FakeSandbox:
    """run_page's view of a sandbox: a tree, an (empty) seed cache, an environment."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="docs-commands-test-")
        self.tree = os.path.join(self.dir, "tree")
        self.seed = os.path.join(self.dir, "seed")
        os.makedirs(self.tree)
        os.makedirs(self.seed)

    def env(self, name):
        os.makedirs(os.path.join(self.dir, name), exist_ok=True)
        return {"PATH": os.environ["PATH"], "HOME": self.dir,
                "CCLTUNE_CACHE_DIR": os.path.join(self.dir, name, "cache")}

    def close(self):
        shutil.rmtree(self.dir)


class Running(unittest.TestCase):
    def run_page(self, text):
        box = FakeSandbox()
        self.addCleanup(box.close)
        cmds = dc.commands_of("docs/guide.md", text)
        got = box and dc.run_page(box, "docs/guide.md", cmds)
        return cmds, [dc.check_result(c, got.get(i)) for i, c in enumerate(cmds)]

    def test_state_carries_and_a_failing_command_fails(self):
        cmds, errors = self.run_page("```sh\nx=5\ntest \"$x\" = 5\nf() { echo hi; }\nf\n"
                                     "false\necho after\n```\n")
        self.assertEqual(errors[:4], [[], [], [], []])
        self.assertEqual(len(errors[4]), 1)
        self.assertIn("docs/guide.md:6: exit 1: false", errors[4][0])
        self.assertEqual(errors[5], [])

    def test_console_output_must_show(self):
        cmds, errors = self.run_page("```console\n$ echo '# nodes 2'\n...\n# nodes 2\n"
                                     "$ echo other\n# nodes 3\n```\n")
        self.assertEqual(errors[0], [])
        self.assertEqual(len(errors[1]), 1)
        self.assertIn("prints no line '# nodes 3'", errors[1][0])


if __name__ == "__main__":
    unittest.main()

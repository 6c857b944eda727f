#!/usr/bin/env python3
"""manifests/image/apt_mirror.sh, the Debian mirror the image build and the fresh-machine bench
take from apt's own configuration: sample sources.list (one-line) and sources.list.d/
(*.list one-line, *.sources deb822) files under a root directory of their own
(APT_MIRROR_ROOT), the URIs it prints for the Debian archive and its security archive, the
overrides, and the one clear error when apt names no Debian source. No network, no root."""
import os
import subprocess
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
HELPER = os.path.join(HERE, "..", "..", "manifests", "image", "apt_mirror.sh")

DEBIAN_SOURCES = """\
Types: deb
# http://snapshot.example/archive/debian/20250520T000000Z
URIs: http://mirror-a.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror-a.example/debian-security/
Suites: bookworm-security
Components: main
"""
FOREIGN_SOURCES = """\
Types: deb
URIs: https://vendor.example/node_20.x
Suites: nodistro
Components: main
"""


class AptMirrorTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        os.makedirs(os.path.join(self.root, "etc", "apt", "sources.list.d"))

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, rel, text):
        with open(os.path.join(self.root, "etc", "apt", rel), "w") as f:
            f.write(textwrap.dedent(text))

    def run_helper(self, kind=None, **env):
        e = {k: v for k, v in os.environ.items() if not k.startswith("CCLTUNE_DEBIAN")}
        e.update(env, APT_MIRROR_ROOT=self.root)
        args = ["bash", HELPER] + ([kind] if kind else [])
        return subprocess.run(args, env=e, capture_output=True, text=True, timeout=30)

    def mirror(self, kind=None, **env):
        r = self.run_helper(kind, **env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")
        return r.stdout.strip()

    def test_deb822_gives_archive_and_security_uris(self):
        self.write("sources.list.d/debian.sources", DEBIAN_SOURCES)
        self.assertEqual(self.mirror(), "http://mirror-a.example/debian")
        self.assertEqual(self.mirror("main"), "http://mirror-a.example/debian")
        self.assertEqual(self.mirror("security"), "http://mirror-a.example/debian-security")

    def test_one_line_format_with_options_comments_and_deb_src(self):
        self.write("sources.list", """\
            # deb http://commented.example/debian bookworm main
            deb-src http://src-only.example/debian bookworm main
            deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://mirror-b.example/debian/ bookworm main contrib  # the archive
            deb http://mirror-b.example/debian-security bookworm-security main
            """)
        self.assertEqual(self.mirror(), "http://mirror-b.example/debian")
        self.assertEqual(self.mirror("security"), "http://mirror-b.example/debian-security")

    def test_sources_list_first_then_parts_in_name_order(self):
        self.write("sources.list.d/b.list", "deb http://mirror-d.example/debian trixie main\n")
        self.write("sources.list.d/a.sources", DEBIAN_SOURCES)
        self.assertEqual(self.mirror(), "http://mirror-a.example/debian")
        self.write("sources.list", "deb http://mirror-c.example/debian stable main\n")
        self.assertEqual(self.mirror(), "http://mirror-c.example/debian")
        # No security suite in sources.list: the first one of the parts.
        self.assertEqual(self.mirror("security"), "http://mirror-a.example/debian-security")

    def test_foreign_disabled_and_ignored_files_are_skipped(self):
        self.write("sources.list.d/0-node.sources", FOREIGN_SOURCES)
        self.write("sources.list.d/1-cloud.list",
                   "deb https://vendor.example/apt cloud-sdk-bookworm main\n")
        self.write("sources.list.d/2-off.sources", """\
            Types: deb
            URIs: http://disabled.example/debian
            Suites: bookworm
            Components: main
            Enabled: no
            """)
        self.write("sources.list.d/3-old.list.disabled",
                   "deb http://ignored.example/debian bookworm main\n")
        self.write("sources.list.d/4-src.sources", """\
            Types: deb-src
            URIs: http://src-only.example/debian
            Suites: bookworm
            Components: main
            """)
        self.write("sources.list.d/5-debian.sources", """\
            types: deb
            uris:
             http://mirror-e.example/debian
             http://mirror-f.example/debian
            suites: bookworm
             bookworm-updates
            components: main
            """)
        self.assertEqual(self.mirror(), "http://mirror-e.example/debian")

    def test_overrides_win(self):
        self.write("sources.list.d/debian.sources", DEBIAN_SOURCES)
        self.assertEqual(self.mirror(CCLTUNE_DEBIAN_MIRROR="http://local.example/deb/"),
                         "http://local.example/deb")
        self.assertEqual(self.mirror("security", CCLTUNE_DEBIAN_SECURITY_MIRROR="file:/srv/sec"),
                         "file:/srv/sec")
        self.assertEqual(self.mirror("security", CCLTUNE_DEBIAN_MIRROR="http://local.example/deb"),
                         "http://mirror-a.example/debian-security")

    def test_no_debian_source_is_one_clear_error(self):
        for setup in ("empty", "foreign only"):
            with self.subTest(setup=setup):
                if setup == "foreign only":
                    self.write("sources.list.d/node.sources", FOREIGN_SOURCES)
                for kind, var in (("main", "CCLTUNE_DEBIAN_MIRROR"),
                                  ("security", "CCLTUNE_DEBIAN_SECURITY_MIRROR")):
                    r = self.run_helper(kind)
                    self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
                    self.assertEqual(r.stdout, "")
                    self.assertIn("apt_mirror.sh: apt's sources name no deb entry", r.stderr)
                    self.assertIn(var, r.stderr)
                    self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_unknown_kind_is_refused(self):
        r = self.run_helper("backports")
        self.assertEqual(r.returncode, 2)
        self.assertIn("kind must be main or security, not 'backports'", r.stderr)

    def test_sourced_it_defines_debian_mirror_and_leaves_the_shell_running(self):
        self.write("sources.list", "deb http://mirror-g.example/debian bookworm main\n")
        script = 'source "$1"; debian_mirror main; debian_mirror security; echo "rc=$?"'
        e = {k: v for k, v in os.environ.items() if not k.startswith("CCLTUNE_DEBIAN")}
        e["APT_MIRROR_ROOT"] = self.root
        r = subprocess.run(["bash", "-c", script, "test", HELPER], env=e, capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(r.stdout.split(), ["http://mirror-g.example/debian", "rc=1"], r.stderr)


if __name__ == "__main__":
    unittest.main()

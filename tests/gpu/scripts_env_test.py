#!/usr/bin/env python3
"""The device scripts of tests/gpu/ keep NVLink multicast off on the shared GPU machines they run
on, through one place (device_env.sh): no GPU needed.

- device_env.sh exports NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1 and
  NVSHMEM_DISABLE_NVLS=1, and a process started after sourcing it sees exactly those values,
  also when the caller's environment or a bundle's env.sh said otherwise;
- every other tests/gpu/*.sh sources device_env.sh at its top level before any command that
  could start a GPU process (only `set` options and plain argument assignments come first);
- every script's header says how to run it from the repository (`bash tests/gpu/NAME.sh`) and
  names no path outside the repository.
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

GPU_DIR = os.path.dirname(os.path.abspath(__file__))
DEVICE_ENV = os.path.join(GPU_DIR, "device_env.sh")
MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                 "NVSHMEM_DISABLE_NVLS": "1"}
SOURCE_LINE = re.compile(r'^(source|\.) "\$\(dirname "\$\{BASH_SOURCE\[0\]\}"\)/device_env\.sh"\s*$')
# What may come before the source line: shell options, plain assignments of the arguments
# (n=${1:?...}), `shift`; never a command substitution or another command.
HARMLESS = re.compile(r'^(set -[a-z]+( [a-z]+)*|[A-Za-z_][A-Za-z0-9_]*=\$\{[0-9@*][^}]*\}|shift)'
                      r'(\s*;\s*(shift|[A-Za-z_][A-Za-z0-9_]*=\$\{[0-9@*][^}]*\}))*\s*$')
OUTSIDE_PATHS = re.compile(r'/work/|\.\./shared|shared/tools|bundle-for-gpu|\.\./\.\./\.\.')


def device_scripts():
    return sorted(os.path.join(GPU_DIR, f) for f in os.listdir(GPU_DIR)
                  if f.endswith(".sh") and f != "device_env.sh")


def read(path):
    with open(path) as f:
        return f.read()


def header(lines):
    """The comment block after the shebang."""
    out = []
    for line in lines[1:]:
        if not line.startswith("#"):
            break
        out.append(line)
    return out


class DeviceEnvTest(unittest.TestCase):
    def source_and_print(self, extra_env, bundle_env=None):
        """The three variables as a process started after sourcing device_env.sh sees them."""
        with tempfile.TemporaryDirectory() as tmp:
            env = {k: v for k, v in os.environ.items() if not k.startswith("CCLTUNE_")}
            env.update(extra_env, OUT=os.path.join(tmp, "out"))
            if bundle_env is None:
                build = os.path.join(tmp, "build")
                os.makedirs(build)
                with open(os.path.join(build, "CMakeCache.txt"), "w"):
                    pass
                env["CCLTUNE_BUILD_DIR"] = build
            else:
                bundle = os.path.join(tmp, "bundle")
                os.makedirs(os.path.join(bundle, "bin"))
                with open(os.path.join(bundle, "env.sh"), "w") as f:
                    f.write(bundle_env)
                env["CCLTUNE_GPU_BUNDLE"] = bundle
            script = 'set -u; source "$1" && env'
            run = subprocess.run(["bash", "-c", script, "test", DEVICE_ENV], env=env,
                                 capture_output=True, text=True, timeout=30)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            seen = dict(l.split("=", 1) for l in run.stdout.splitlines() if "=" in l)
            return {k: seen.get(k) for k in MULTICAST_OFF}

    def test_exports_each_variable_with_its_value(self):
        text = read(DEVICE_ENV)
        exported = {}
        for line in text.splitlines():
            if line.startswith("export "):
                for word in line.split()[1:]:
                    if "=" in word:
                        name, value = word.split("=", 1)
                        exported[name] = value
        for name, value in MULTICAST_OFF.items():
            self.assertEqual(exported.get(name), value, "device_env.sh: export %s=%s" % (name, value))

    def test_build_tree_processes_see_multicast_off_whatever_the_caller_set(self):
        self.assertEqual(self.source_and_print({}), MULTICAST_OFF)
        caller = {"NCCL_NVLS_ENABLE": "1", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "0",
                  "NVSHMEM_DISABLE_NVLS": "0"}
        self.assertEqual(self.source_and_print(caller), MULTICAST_OFF)

    def test_a_bundle_env_cannot_turn_multicast_on(self):
        bundle_env = "export NCCL_NVLS_ENABLE=1 NVSHMEM_DISABLE_NVLS=0\n"
        self.assertEqual(self.source_and_print({}, bundle_env), MULTICAST_OFF)

    def test_no_build_tree_and_no_bundle_is_one_clear_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            env = {k: v for k, v in os.environ.items() if not k.startswith("CCLTUNE_")}
            env.update(CCLTUNE_BUILD_DIR=os.path.join(tmp, "none"), OUT=os.path.join(tmp, "out"))
            # A bundle in .gpu/ of the checkout would be picked up instead: only check when none.
            if os.path.exists(os.path.join(GPU_DIR, "..", "..", ".gpu", "env.sh")):
                self.skipTest(".gpu/env.sh exists in this checkout")
            run = subprocess.run(["bash", "-c", 'source "$1"; echo reached', "test", DEVICE_ENV],
                                 env=env, capture_output=True, text=True, timeout=30)
            self.assertEqual(run.returncode, 2, run.stdout + run.stderr)
            self.assertIn("make build", run.stdout + run.stderr)
            self.assertNotIn("reached", run.stdout)


class DeviceScriptsTest(unittest.TestCase):
    def test_there_are_device_scripts(self):
        self.assertGreater(len(device_scripts()), 5)

    def test_each_script_sources_device_env_before_anything_else(self):
        for path in device_scripts():
            name = os.path.basename(path)
            with self.subTest(script=name):
                lines = read(path).splitlines()
                self.assertTrue(lines and lines[0].startswith("#!"), name + ": no shebang")
                found = False
                for line in lines[1:]:
                    stripped = line.strip()
                    if not stripped or stripped.startswith("#"):
                        continue
                    if SOURCE_LINE.match(line):
                        found = True
                        break
                    self.assertRegex(stripped, HARMLESS,
                                     "%s: runs %r before sourcing device_env.sh" % (name, stripped))
                self.assertTrue(found, name + ": does not source device_env.sh at its top")

    def test_each_header_says_how_to_run_it_from_the_repository(self):
        for path in device_scripts():
            name = os.path.basename(path)
            with self.subTest(script=name):
                head = "\n".join(header(read(path).splitlines()))
                self.assertIn("bash tests/gpu/" + name, head)
                self.assertRegex(head, r"make build|cmake --build build")

    def test_no_script_names_a_path_outside_the_repository(self):
        for path in device_scripts() + [DEVICE_ENV]:
            with self.subTest(script=os.path.basename(path)):
                for i, line in enumerate(read(path).splitlines(), 1):
                    self.assertIsNone(OUTSIDE_PATHS.search(line), "%s:%d: %s" % (path, i, line))


if __name__ == "__main__":
    sys.exit(unittest.main())

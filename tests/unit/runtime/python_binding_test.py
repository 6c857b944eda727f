#!/usr/bin/env python3
"""ccltune's Python binding against the built libccltune, without a GPU: the ctypes mirror of
ccltuneConfig_t lines up with the C struct (a field set from Python is the field the library
reads and names in its error), versions agree, errors come back as CcltuneError with the
library's message, and a library that cannot be loaded is one clear error.

Run by ctest (runtime_python_binding) with CCLTUNE_LIBRARY and PYTHONPATH set.
"""
import ctypes
import os
import subprocess
import sys
import unittest

from ccltune import _lib


def init_error(**fields):
    """The message of ccltuneCommInit with a NULL communicator and these config fields."""
    cfg = _lib.Config.make(**fields)
    comm = ctypes.c_void_p()
    rc = _lib.lib().ccltuneCommInit(None, ctypes.byref(cfg), ctypes.byref(comm))
    return rc, _lib.lib().ccltuneGetLastError().decode()


class BindingTest(unittest.TestCase):
    def test_version_matches(self):
        v = ctypes.c_int()
        self.assertEqual(_lib.lib().ccltuneGetVersion(ctypes.byref(v)), 0)
        self.assertEqual(v.value, _lib.VERSION_CODE)

    def test_config_accepted_then_null_comm_named(self):
        # A well-formed struct passes validation; only then does init look at the comm.
        rc, msg = init_error()
        self.assertEqual(rc, 1)
        self.assertIn("NCCL communicator is NULL", msg)

    def test_each_field_lands_where_the_library_reads_it(self):
        for fields, named in (({"timeout_ms": 5}, "timeoutMs=5"),
                              ({"load_timeout_ms": 20000}, "loadTimeoutMs=20000"),
                              ({"peer_memory": 7}, "peerMemory=7"),
                              ({"pool_bytes": (64 << 30) + 1}, "poolBytes="),
                              ({"redis_url": "http://x"}, "redisUrl"),
                              ({"fingerprint": "Bad FP"}, "ccltuneConfig_t.fingerprint")):
            rc, msg = init_error(**fields)
            self.assertEqual(rc, 1, msg)
            self.assertIn(named, msg)

    def test_wrong_size_is_named(self):
        cfg = _lib.Config.make()
        cfg.size = 8
        rc = _lib.lib().ccltuneCommInit(None, ctypes.byref(cfg), ctypes.byref(ctypes.c_void_p()))
        self.assertEqual(rc, 1)
        self.assertIn("ccltuneConfig_t.size=8", _lib.lib().ccltuneGetLastError().decode())

    def test_check_raises_with_the_message(self):
        rc, _ = init_error(timeout_ms=5)
        with self.assertRaises(_lib.CcltuneError) as e:
            _lib.check(rc, "ccltuneCommInit")
        self.assertIn("invalid argument", str(e.exception))
        self.assertIn("timeoutMs=5", str(e.exception))

    def test_missing_library_is_one_clear_error(self):
        code = "from ccltune import _lib\ntry:\n _lib.lib()\nexcept _lib.CcltuneError as e:\n print(e)"
        env = dict(os.environ, CCLTUNE_LIBRARY="/nonexistent/libccltune.so.0")
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=60).stdout
        self.assertIn("set CCLTUNE_LIBRARY", out)


if __name__ == "__main__":
    unittest.main()

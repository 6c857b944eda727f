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

    def rmsnorm_error(self, **changes):
        """The message of ccltuneAllReduceResidualRmsNorm with a NULL communicator."""
        a = dict(input=0x10000, residual=0x20000, weight=0x30000, out=0x40000, tokens=32,
                 hidden=4096, eps=1e-5, datatype=_lib.NCCL_TYPES["bfloat16"])
        a.update(changes)
        rc = _lib.lib().ccltuneAllReduceResidualRmsNorm(
            a["input"], a["residual"], a["weight"], a["out"], a["tokens"], a["hidden"], a["eps"],
            a["datatype"], None, None)
        return rc, _lib.lib().ccltuneGetLastError().decode()

    def test_epilogue_arguments_land_where_the_library_reads_them(self):
        for changes, named in (({"input": None}, "input: NULL"),
                               ({"residual": None}, "residual: NULL"),
                               ({"weight": 0x30008}, "weight: not 16-byte aligned"),
                               ({"out": None}, "out: NULL"),
                               ({"hidden": 100}, "hidden=100"),
                               ({"tokens": 1 << 40}, "tokens=%d" % (1 << 40)),
                               ({"eps": -1.0}, "eps=-1"),
                               ({"datatype": _lib.NCCL_TYPES["int32"]}, "datatype=2"),
                               ({}, "comm: NULL")):  # every argument good: then the comm
            rc, msg = self.rmsnorm_error(**changes)
            self.assertEqual(rc, 1, msg)
            self.assertIn(named, msg)

    def test_bias_and_choice_prototypes(self):
        l = _lib.lib()
        rc = l.ccltuneAllReduceBias(0x10000, None, 0x40000, 8, 4096, _lib.NCCL_TYPES["float16"],
                                    None, None)
        self.assertEqual(rc, 1)
        self.assertIn("bias: NULL", l.ccltuneGetLastError().decode())
        rc = l.ccltuneAllReduceBias(0x10000, 0x30000, 0x40000, 8, 4104 + 4, 7, None, None)
        self.assertIn("hidden=4108", l.ccltuneGetLastError().decode())
        buf = ctypes.create_string_buffer(64)
        rc = l.ccltuneGetEpilogueChoice(None, _lib.EPILOGUES["residual_rmsnorm"], 4096,
                                        _lib.NCCL_TYPES["bfloat16"], 8, 1, buf, 64)
        self.assertEqual(rc, 1)
        self.assertIn("comm: NULL", l.ccltuneGetLastError().decode())

    def test_missing_library_is_one_clear_error(self):
        code = "from ccltune import _lib\ntry:\n _lib.lib()\nexcept _lib.CcltuneError as e:\n print(e)"
        env = dict(os.environ, CCLTUNE_LIBRARY="/nonexistent/libccltune.so.0")
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=60).stdout
        self.assertIn("set CCLTUNE_LIBRARY", out)


if __name__ == "__main__":
    unittest.main()

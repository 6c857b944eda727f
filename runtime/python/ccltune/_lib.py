"""ctypes view of libccltune's C API (runtime/include/ccltune.h) and of the NCCL it links."""
import ctypes
import os

VERSION_CODE = 200  # CCLTUNE_VERSION_CODE of the header this binding follows (0.2: epilogues)

# ncclDataType_t / ncclRedOp_t values (nccl.h).
NCCL_TYPES = {"int8": 0, "int32": 2, "float16": 6, "float32": 7, "bfloat16": 9}
NCCL_OPS = {"sum": 0, "prod": 1, "max": 2, "min": 3, "avg": 4}
OPS = {"all_reduce": 0, "all_gather": 1, "reduce_scatter": 2}
EPILOGUES = {"none": 0, "bias": 1, "residual_rmsnorm": 2}  # ccltuneEpilogue_t
RESULTS = {0: "success", 1: "invalid argument", 2: "CUDA error", 3: "NCCL error", 4: "timeout",
           5: "internal error"}


class CcltuneError(RuntimeError):
    """A libccltune call failed; the message is the library's."""


class Config(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("version", ctypes.c_int),
                ("resultsFile", ctypes.c_char_p), ("redisUrl", ctypes.c_char_p),
                ("fingerprint", ctypes.c_char_p), ("loadTimeoutMs", ctypes.c_int),
                ("timeoutMs", ctypes.c_int), ("poolBytes", ctypes.c_size_t),
                ("stagingBytes", ctypes.c_size_t), ("peerMemory", ctypes.c_int)]

    @classmethod
    def make(cls, results_file=None, redis_url=None, fingerprint=None, load_timeout_ms=0,
             timeout_ms=0, pool_bytes=0, staging_bytes=0, peer_memory=-1):
        def text(v):
            return None if v is None else str(v).encode()
        return cls(ctypes.sizeof(cls), VERSION_CODE, text(results_file), text(redis_url),
                   text(fingerprint), load_timeout_ms, timeout_ms, pool_bytes, staging_bytes,
                   peer_memory)


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]


_lib = None
_nccl = None


def lib():
    """libccltune, loaded once, with argument types declared."""
    global _lib, _nccl
    if _lib is not None:
        return _lib
    path = os.environ.get("CCLTUNE_LIBRARY", "libccltune.so.0")
    try:
        l = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        raise CcltuneError("cannot load libccltune from %r (set CCLTUNE_LIBRARY to the path of "
                           "libccltune.so.0): %s" % (path, e)) from e
    p, sz, i, f32 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_float
    for name, args in {
            "ccltuneCommInit": [p, ctypes.POINTER(Config), ctypes.POINTER(p)],
            "ccltuneCommDestroy": [p],
            "ccltuneAllReduce": [p, p, sz, i, i, p, p],
            "ccltuneAllGather": [p, p, sz, i, p, p],
            "ccltuneReduceScatter": [p, p, sz, i, i, p, p],
            "ccltuneGetChoice": [p, i, i, i, sz, i, ctypes.c_char_p, sz],
            "ccltuneAllReduceResidualRmsNorm": [p, p, p, p, sz, sz, f32, i, p, p],
            "ccltuneAllReduceBias": [p, p, p, sz, sz, i, p, p],
            "ccltuneGetEpilogueChoice": [p, i, sz, i, sz, i, ctypes.c_char_p, sz],
            "ccltuneMemAlloc": [p, ctypes.POINTER(p), sz],
            "ccltuneMemFree": [p, p],
            "ccltuneGetVersion": [ctypes.POINTER(i)]}.items():
        f = getattr(l, name)
        f.argtypes, f.restype = args, i
    l.ccltuneGetLastError.restype = ctypes.c_char_p
    l.ccltuneGetErrorString.restype = ctypes.c_char_p
    l.ccltuneGetErrorString.argtypes = [i]
    version = i()
    l.ccltuneGetVersion(ctypes.byref(version))
    # Minor versions add entry points: the library may be newer than this binding, not older.
    if version.value // 10000 != VERSION_CODE // 10000 or version.value // 100 < VERSION_CODE // 100:
        raise CcltuneError("libccltune %d at %r, this binding follows %d (same major, minor at "
                           "least the binding's)" % (version.value, path, VERSION_CODE))
    _lib = l
    # The NCCL libccltune links (already loaded as its dependency: the same instance).
    _nccl = ctypes.CDLL("libnccl.so.2")
    _nccl.ncclGetUniqueId.argtypes = [ctypes.POINTER(UniqueId)]
    _nccl.ncclCommInitRank.argtypes = [ctypes.POINTER(p), i, UniqueId, i]
    _nccl.ncclCommDestroy.argtypes = [p]
    _nccl.ncclGetErrorString.restype = ctypes.c_char_p
    return _lib


def nccl():
    lib()
    return _nccl


def check(result, what):
    if result != 0:
        msg = lib().ccltuneGetLastError().decode(errors="replace")
        raise CcltuneError("%s: %s: %s" % (what, RESULTS.get(result, result), msg))


def check_nccl(result, what):
    if result != 0:
        raise CcltuneError("%s: %s" % (what, nccl().ncclGetErrorString(result).decode()))

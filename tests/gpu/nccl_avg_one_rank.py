#!/usr/bin/env python3
"""NCCL's own ncclAllReduce on a one-rank communicator, avg against sum, on counts just past a
power of two: which elements NCCL leaves unwritten. No ccltune part runs: this checks the
reference that runtime_gpu_test compares with.

Usage (on a GPU machine with PyTorch, for the buffers and the stream):
    python3 tests/gpu/nccl_avg_one_rank.py /path/to/libnccl.so.2
"""
import ctypes
import sys

import torch

NCCL_SUM, NCCL_AVG = 0, 4
NCCL_TYPES = {torch.float32: 7, torch.float16: 6, torch.bfloat16: 9}


def main(path):
    lib = ctypes.CDLL(path)
    comm = ctypes.c_void_p()
    devs = (ctypes.c_int * 1)(0)
    if lib.ncclCommInitAll(ctypes.byref(comm), 1, devs) != 0:
        sys.exit("ncclCommInitAll failed")
    version = ctypes.c_int()
    lib.ncclGetVersion(ctypes.byref(version))
    print("NCCL", version.value)
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    for dtype, nccl_type in NCCL_TYPES.items():
        for count in (262150, 524294, 1048582, 2097158, 4194310):
            x = torch.rand(count, device="cuda", dtype=dtype) + 0.5
            for op, name in ((NCCL_SUM, "sum"), (NCCL_AVG, "avg")):
                y = torch.zeros_like(x)
                rc = lib.ncclAllReduce(ctypes.c_void_p(x.data_ptr()), ctypes.c_void_p(y.data_ptr()),
                                       ctypes.c_size_t(count), nccl_type, op, comm, stream)
                torch.cuda.synchronize()
                bad = (y != x).nonzero()
                line = f"{str(dtype):15s} {count:8d} {name}: rc {rc}, {bad.numel()} differ"
                if bad.numel():
                    i = bad[0].item()
                    line += f", first at {i} ({y[i].item()} vs {x[i].item()})"
                print(line)


if __name__ == "__main__":
    main(sys.argv[1])

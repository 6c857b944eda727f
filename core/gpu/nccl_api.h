// The NCCL entry points that core/gpu and the runtime call, as one table of function
// pointers. Why a table: libccltune-nccl (runtime/nccl_shim) exports NCCL's own names, so
// inside it a direct call to ncclAllReduce would call the shim itself. Everything here calls
// through Nccl(), which the normal builds define as the NCCL they link
// (nccl_api_linked.cc) and the shim defines as the real NCCL it found at run time.
// Thread-safe: the table is built once and never changes.
#pragma once

#include <nccl.h>

namespace ccltune::gpu {

struct NcclApi {
  decltype(&::ncclGetVersion) GetVersion = nullptr;
  decltype(&::ncclGetErrorString) GetErrorString = nullptr;
  decltype(&::ncclGetLastError) GetLastError = nullptr;
  decltype(&::ncclCommCount) CommCount = nullptr;
  decltype(&::ncclCommUserRank) CommUserRank = nullptr;
  decltype(&::ncclCommCuDevice) CommCuDevice = nullptr;
  decltype(&::ncclCommGetAsyncError) CommGetAsyncError = nullptr;
  decltype(&::ncclCommSplit) CommSplit = nullptr;
  decltype(&::ncclCommDestroy) CommDestroy = nullptr;
  decltype(&::ncclCommAbort) CommAbort = nullptr;
  decltype(&::ncclMemAlloc) MemAlloc = nullptr;
  decltype(&::ncclMemFree) MemFree = nullptr;
  decltype(&::ncclGroupStart) GroupStart = nullptr;
  decltype(&::ncclGroupEnd) GroupEnd = nullptr;
  decltype(&::ncclSend) Send = nullptr;
  decltype(&::ncclRecv) Recv = nullptr;
  decltype(&::ncclAllReduce) AllReduce = nullptr;
  decltype(&::ncclAllGather) AllGather = nullptr;
  decltype(&::ncclReduceScatter) ReduceScatter = nullptr;
  decltype(&::ncclBroadcast) Broadcast = nullptr;
};

// The table in use; every entry non-null. Defined once per binary: nccl_api_linked.cc for
// everything that links NCCL, runtime/nccl_shim/real_nccl.cc for libccltune-nccl.
const NcclApi& Nccl();

}  // namespace ccltune::gpu

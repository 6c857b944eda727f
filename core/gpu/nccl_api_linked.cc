// Nccl() for binaries that link NCCL (the worker, libccltune, the tests): the linked symbols.
#include "core/gpu/nccl_api.h"

namespace ccltune::gpu {

const NcclApi& Nccl() {
  static const NcclApi api{::ncclGetVersion,
                           ::ncclGetErrorString,
                           ::ncclGetLastError,
                           ::ncclCommCount,
                           ::ncclCommUserRank,
                           ::ncclCommCuDevice,
                           ::ncclCommGetAsyncError,
                           ::ncclCommSplit,
                           ::ncclCommDestroy,
                           ::ncclCommAbort,
                           ::ncclMemAlloc,
                           ::ncclMemFree,
                           ::ncclGroupStart,
                           ::ncclGroupEnd,
                           ::ncclSend,
                           ::ncclRecv,
                           ::ncclAllReduce,
                           ::ncclAllGather,
                           ::ncclReduceScatter,
                           ::ncclBroadcast};
  return api;
}

}  // namespace ccltune::gpu

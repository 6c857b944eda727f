// Checked CUDA and NCCL calls: each failure becomes a Status naming the call, the file:line
// and, for NCCL, ncclGetLastError's detail. Prefixed names because NCCL and nccl-tests both
// define CUDACHECK/NCCLCHECK.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

#include "core/base/status.h"

namespace ccltune::gpu {

// Also clears CUDA's sticky last error so the next check does not report this one again.
core::Status CudaError(cudaError_t err, const char* expr, const char* file, int line);
core::Status NcclError(ncclResult_t res, ncclComm_t comm, const char* expr, const char* file,
                       int line);

}  // namespace ccltune::gpu

#define CCLTUNE_CUDA_TRY(expr)                                                        \
  do {                                                                                \
    const cudaError_t ccltune_cuda_err_ = (expr);                                     \
    if (ccltune_cuda_err_ != cudaSuccess)                                             \
      return ::ccltune::gpu::CudaError(ccltune_cuda_err_, #expr, __FILE__, __LINE__); \
  } while (0)

// ncclInProgress is not a failure on a non-blocking communicator: the caller waits for it.
#define CCLTUNE_NCCL_TRY(comm, expr)                                                          \
  do {                                                                                        \
    const ncclResult_t ccltune_nccl_res_ = (expr);                                            \
    if (ccltune_nccl_res_ != ncclSuccess && ccltune_nccl_res_ != ncclInProgress)              \
      return ::ccltune::gpu::NcclError(ccltune_nccl_res_, (comm), #expr, __FILE__, __LINE__); \
  } while (0)

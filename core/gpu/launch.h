// One collective as NCCL calls: the mapping from ccltune's vocabulary to NCCL's, and the
// enqueue of each op (allToAll as grouped send/recv, like nccl-tests). Enqueue only: on a
// non-blocking communicator the caller waits for ncclInProgress to clear.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>

#include "core/base/status.h"
#include "core/plan/types.h"

namespace ccltune::gpu {

struct OpShape {
  core::Op op = core::Op::kAllReduce;
  core::Dtype dtype = core::Dtype::kFp32;
  core::RedOp redop = core::RedOp::kSum;
  std::uint64_t count = 0;  // core::ElementCount
  int world = 1;
  int rank = 0;
};

ncclDataType_t NcclType(core::Dtype dtype);
ncclRedOp_t NcclRedOp(core::RedOp redop);  // kNone → ncclSum (unused by non-reducing ops)

// The op itself, out of place, broadcast rooted at rank 0.
core::Status EnqueueDirect(const OpShape& shape, const void* send, void* recv, ncclComm_t comm,
                           cudaStream_t stream);
// allReduce as its two halves: part 0 reduce-scatters into this rank's block of `recv`,
// part 1 all-gathers that block in place. Requires count % world == 0.
core::Status EnqueueRsAgPart(int part, const OpShape& shape, const void* send, void* recv,
                             ncclComm_t comm, cudaStream_t stream);

}  // namespace ccltune::gpu

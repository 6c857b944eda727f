// Enqueue of one collective (launch.h).
#include "core/gpu/launch.h"

#include "core/gpu/cuda_check.h"
#include "core/gpu/nccl_api.h"

namespace ccltune::gpu {
namespace {

const char* At(const void* base, std::uint64_t elems, core::Dtype dtype) {
  return static_cast<const char*>(base) + elems * core::DtypeSize(dtype);
}

core::Status EnqueueAllToAll(const OpShape& s, const void* send, void* recv, ncclComm_t comm,
                             cudaStream_t stream) {
  const ncclDataType_t t = NcclType(s.dtype);
  CCLTUNE_NCCL_TRY(comm, Nccl().GroupStart());
  for (int peer = 0; peer < s.world; ++peer) {
    const std::uint64_t off = s.count * static_cast<std::uint64_t>(peer);
    CCLTUNE_NCCL_TRY(comm, Nccl().Send(At(send, off, s.dtype), s.count, t, peer, comm, stream));
    CCLTUNE_NCCL_TRY(comm, Nccl().Recv(const_cast<char*>(At(recv, off, s.dtype)), s.count, t, peer,
                                       comm, stream));
  }
  CCLTUNE_NCCL_TRY(comm, Nccl().GroupEnd());
  return core::Status::Ok();
}

}  // namespace

ncclDataType_t NcclType(core::Dtype dtype) {
  switch (dtype) {
    case core::Dtype::kFp16:
      return ncclFloat16;
    case core::Dtype::kBf16:
      return ncclBfloat16;
    case core::Dtype::kInt32:
      return ncclInt32;
    case core::Dtype::kInt8:
      return ncclInt8;
    case core::Dtype::kFp32:
    default:
      return ncclFloat32;
  }
}

ncclRedOp_t NcclRedOp(core::RedOp redop) {
  switch (redop) {
    case core::RedOp::kMax:
      return ncclMax;
    case core::RedOp::kMin:
      return ncclMin;
    case core::RedOp::kProd:
      return ncclProd;
    case core::RedOp::kAvg:
      return ncclAvg;
    default:
      return ncclSum;
  }
}

core::Status EnqueueDirect(const OpShape& s, const void* send, void* recv, ncclComm_t comm,
                           cudaStream_t stream) {
  const ncclDataType_t t = NcclType(s.dtype);
  switch (s.op) {
    case core::Op::kAllReduce:
      CCLTUNE_NCCL_TRY(comm,
                       Nccl().AllReduce(send, recv, s.count, t, NcclRedOp(s.redop), comm, stream));
      break;
    case core::Op::kAllGather:
      CCLTUNE_NCCL_TRY(comm, Nccl().AllGather(send, recv, s.count, t, comm, stream));
      break;
    case core::Op::kReduceScatter:
      CCLTUNE_NCCL_TRY(
          comm, Nccl().ReduceScatter(send, recv, s.count, t, NcclRedOp(s.redop), comm, stream));
      break;
    case core::Op::kBroadcast:
      CCLTUNE_NCCL_TRY(comm, Nccl().Broadcast(send, recv, s.count, t, /*root=*/0, comm, stream));
      break;
    case core::Op::kAllToAll:
      return EnqueueAllToAll(s, send, recv, comm, stream);
  }
  return core::Status::Ok();
}

core::Status EnqueueRsAgPart(int part, const OpShape& s, const void* send, void* recv,
                             ncclComm_t comm, cudaStream_t stream) {
  const std::uint64_t chunk = s.count / static_cast<std::uint64_t>(s.world);
  char* mine = const_cast<char*>(At(recv, chunk * static_cast<std::uint64_t>(s.rank), s.dtype));
  const ncclDataType_t t = NcclType(s.dtype);
  if (part == 0) {
    CCLTUNE_NCCL_TRY(comm,
                     Nccl().ReduceScatter(send, mine, chunk, t, NcclRedOp(s.redop), comm, stream));
  } else {
    CCLTUNE_NCCL_TRY(comm, Nccl().AllGather(mine, recv, chunk, t, comm, stream));
  }
  return core::Status::Ok();
}

}  // namespace ccltune::gpu

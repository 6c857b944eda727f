// NCCL's data types and reduction ops as ccltune names them (nullopt for those ccltune does
// not tune: the call then goes to NCCL as it is), and a collective call's arguments as the
// runtime takes them. Shared by the C API and libccltune-nccl.
#pragma once

#include <nccl.h>

#include <optional>

#include "core/plan/types.h"
#include "runtime/runtime_comm.h"

namespace ccltune::runtime {

inline std::optional<core::Dtype> DtypeOf(ncclDataType_t t) {
  switch (t) {
    case ncclFloat32:
      return core::Dtype::kFp32;
    case ncclFloat16:
      return core::Dtype::kFp16;
    case ncclBfloat16:
      return core::Dtype::kBf16;
    case ncclInt32:
      return core::Dtype::kInt32;
    case ncclInt8:
      return core::Dtype::kInt8;
    default:
      return std::nullopt;
  }
}

// User-defined ops (ncclRedOpCreatePreMulSum) are not tuned.
inline std::optional<core::RedOp> RedOpOf(ncclRedOp_t op) {
  switch (op) {
    case ncclSum:
      return core::RedOp::kSum;
    case ncclMax:
      return core::RedOp::kMax;
    case ncclMin:
      return core::RedOp::kMin;
    case ncclProd:
      return core::RedOp::kProd;
    case ncclAvg:
      return core::RedOp::kAvg;
    default:
      return std::nullopt;
  }
}

// `reduces`: false for allGather (its redop is kNone whatever `redop` says).
inline Call MakeCall(core::Op op, const void* send, void* recv, std::uint64_t count,
                     ncclDataType_t type, ncclRedOp_t redop, bool reduces, cudaStream_t stream) {
  Call c;
  c.op = op;
  c.dtype = DtypeOf(type);
  c.redop = reduces ? RedOpOf(redop) : std::optional(core::RedOp::kNone);
  c.nccl_type = type;
  c.nccl_op = redop;
  c.send = send;
  c.recv = recv;
  c.count = count;
  c.stream = stream;
  return c;
}

}  // namespace ccltune::runtime

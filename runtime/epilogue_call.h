// The argument checks of the all-reduce + epilogue entry points (ccltune.h:
// ccltuneAllReduceResidualRmsNorm, ccltuneAllReduceBias, ccltuneGetEpilogueChoice). Pure C++
// (no CUDA, no communicator): they run before anything is enqueued, so ranks that pass the
// same arguments fail alike before any collective starts, and CI tests them. Each error is
// InvalidArgument naming the argument and what it allows.
#pragma once

#include <cstdint>
#include <optional>

#include "core/base/status.h"
#include "core/plan/epilogue.h"
#include "core/plan/types.h"

namespace ccltune::runtime {

// One call's arguments as the C API received them.
struct EpilogueArgs {
  core::EpilogueKind kind = core::EpilogueKind::kResidualRmsNorm;
  const void* input = nullptr;
  const void* residual = nullptr;  // residualRmsNorm only
  const void* weight = nullptr;    // RMSNorm's weight, or the bias
  const void* out = nullptr;
  std::uint64_t tokens = 0;
  std::uint64_t hidden = 0;
  double eps = core::kDefaultRmsNormEps;  // residualRmsNorm only
  std::optional<core::Dtype> dtype;       // nullopt: a type ccltune does not know
  int nccl_type = 0;                      // the caller's ncclDataType_t, for the message
};

// The epilogue the call runs ({kind, hidden, eps}), or the first bad argument: pointers
// NULL or not 16-byte aligned, residual aliasing input or out, a type other than fp32,
// fp16, bf16, hidden not a multiple of 8 in 8..16384, tokens x hidden too large, eps not
// finite and >= 0.
core::Result<core::Epilogue> CheckEpilogueArgs(const EpilogueArgs& a);

// The datatype, hidden and tokens rules alone (ccltuneGetEpilogueChoice, which has no
// buffers; kind none: any hidden >= 1).
core::Status CheckEpilogueShape(core::EpilogueKind kind, std::uint64_t tokens, std::uint64_t hidden,
                                const std::optional<core::Dtype>& dtype, int nccl_type);

}  // namespace ccltune::runtime

// Argument checks of the epilogue entry points (epilogue_call.h).
#include "runtime/epilogue_call.h"

#include <cmath>
#include <string>

namespace ccltune::runtime {
namespace {

// Beyond this many elements a call's bytes would not fit the cache's 64-bit sizes with
// room to spare; no real tensor comes near it.
constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 48;

bool Aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

core::Status CheckPointer(const void* p, const char* name) {
  if (p == nullptr) return core::InvalidArgument(std::string(name) + ": NULL");
  if (!Aligned16(p)) {
    return core::InvalidArgument(std::string(name) +
                                 ": not 16-byte aligned (the kernels move whole 16-byte vectors)");
  }
  return core::Status::Ok();
}

}  // namespace

core::Status CheckEpilogueShape(core::EpilogueKind kind, std::uint64_t tokens, std::uint64_t hidden,
                                const std::optional<core::Dtype>& dtype, int nccl_type) {
  if (!dtype || !core::IsFloat(*dtype)) {
    return core::InvalidArgument("datatype=" + std::to_string(nccl_type) +
                                 ": an epilogue runs on ncclFloat32, ncclFloat16 or ncclBfloat16");
  }
  if (kind == core::EpilogueKind::kNone) {
    if (hidden == 0) return core::InvalidArgument("hidden=0: must be at least 1");
  } else if (hidden > static_cast<std::uint64_t>(core::kMaxEpilogueHidden) ||
             !core::HiddenAllowed(static_cast<long long>(hidden))) {
    return core::InvalidArgument("hidden=" + std::to_string(hidden) + ": must be " +
                                 core::HiddenRule());
  }
  if (tokens > kMaxElements / hidden) {
    return core::InvalidArgument("tokens=" + std::to_string(tokens) + ": tokens x hidden over " +
                                 std::to_string(kMaxElements) + " elements");
  }
  return core::Status::Ok();
}

core::Result<core::Epilogue> CheckEpilogueArgs(const EpilogueArgs& a) {
  const bool norm = a.kind == core::EpilogueKind::kResidualRmsNorm;
  if (a.kind == core::EpilogueKind::kNone) {
    return core::InvalidArgument("epilogue: none is ccltuneAllReduce's");
  }
  CCLTUNE_RETURN_IF_ERROR(CheckPointer(a.input, "input"));
  if (norm) CCLTUNE_RETURN_IF_ERROR(CheckPointer(a.residual, "residual"));
  CCLTUNE_RETURN_IF_ERROR(CheckPointer(a.weight, norm ? "weight" : "bias"));
  CCLTUNE_RETURN_IF_ERROR(CheckPointer(a.out, "out"));
  if (norm && (a.residual == a.input || a.residual == a.out)) {
    return core::InvalidArgument(
        "residual: must not be input or out (it is read and written in place)");
  }
  CCLTUNE_RETURN_IF_ERROR(CheckEpilogueShape(a.kind, a.tokens, a.hidden, a.dtype, a.nccl_type));
  if (norm && (!std::isfinite(a.eps) || a.eps < 0)) {
    return core::InvalidArgument("eps=" + std::to_string(a.eps) + ": must be finite and >= 0");
  }
  core::Epilogue e;
  e.kind = a.kind;
  e.hidden = static_cast<int>(a.hidden);
  if (norm) e.eps = a.eps;
  return e;
}

}  // namespace ccltune::runtime

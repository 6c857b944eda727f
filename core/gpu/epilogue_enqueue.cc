// Epilogue enqueue (epilogue_enqueue.h).
#include "core/gpu/epilogue_enqueue.h"

#include "core/gpu/cuda_check.h"
#include "core/gpu/peer_enqueue.h"

namespace ccltune::gpu {

kernels::EpilogueParams EpilogueParamsOf(const core::Epilogue& e, const void* weight) {
  kernels::EpilogueParams p;
  p.op = e.kind == core::EpilogueKind::kBias ? kernels::EpilogueOp::kBias
                                             : kernels::EpilogueOp::kResidualRmsNorm;
  p.hidden = e.hidden;
  p.eps = static_cast<float>(e.eps);
  p.weight = weight;
  return p;
}

std::uint64_t FusedStaging(const apply::ChoiceSpec& spec, std::uint64_t tokens, int hidden,
                           core::Dtype dtype, int world) {
  return kernels::FusedStagingBytes(PeerAlgoFor(spec, core::Op::kAllReduce), PeerShapeOf(spec),
                                    tokens, hidden, dtype, world);
}

core::Status EnqueueEpilogue(const kernels::EpilogueParams& p, const void* reduced, void* residual,
                             void* out, std::uint64_t tokens, core::Dtype dtype,
                             cudaStream_t stream) {
  CCLTUNE_CUDA_TRY(kernels::LaunchEpilogue(p, reduced, residual, out, tokens, dtype, stream));
  return core::Status::Ok();
}

core::Status EnqueueFused(const apply::ChoiceSpec& spec, const kernels::PeerTeam& team,
                          const kernels::FusedOperands& ops, std::uint64_t tokens,
                          const kernels::EpilogueParams& p, core::Dtype dtype,
                          cudaStream_t stream) {
  CCLTUNE_CUDA_TRY(kernels::LaunchFusedAllReduce(PeerAlgoFor(spec, core::Op::kAllReduce), team, ops,
                                                 tokens, p, dtype, PeerShapeOf(spec), stream));
  return core::Status::Ok();
}

}  // namespace ccltune::gpu

// The epilogue half of a choice for an all-reduce with an epilogue (issue 16), shared by
// the worker (which measures it) and the runtime (which runs the winner): the separate
// kernel after any all-reduce, or the fused peer kernel that does both in one launch.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/apply/choice_spec.h"
#include "core/base/status.h"
#include "core/kernels/epilogue_kernels.h"
#include "core/plan/epilogue.h"

namespace ccltune::gpu {

static_assert(core::kMaxEpilogueHidden == kernels::kMaxEpilogueHidden);
static_assert(core::kEpilogueHiddenMultiple == kernels::kEpilogueHiddenMultiple);

// The kernels' parameters for `e`; `weight` is RMSNorm's gamma or the bias.
kernels::EpilogueParams EpilogueParamsOf(const core::Epilogue& e, const void* weight);

// Staging bytes a fused choice needs per rank beyond its operands (LL's lines).
std::uint64_t FusedStaging(const apply::ChoiceSpec& spec, std::uint64_t tokens, int hidden,
                           core::Dtype dtype, int world);

// Unfused: the separate epilogue kernel on the all-reduce's output `reduced` (out may
// alias it). Fused: one peer launch (spec.fused) over `ops`.
core::Status EnqueueEpilogue(const kernels::EpilogueParams& p, const void* reduced, void* residual,
                             void* out, std::uint64_t tokens, core::Dtype dtype,
                             cudaStream_t stream);
core::Status EnqueueFused(const apply::ChoiceSpec& spec, const kernels::PeerTeam& team,
                          const kernels::FusedOperands& ops, std::uint64_t tokens,
                          const kernels::EpilogueParams& p, core::Dtype dtype, cudaStream_t stream);

}  // namespace ccltune::gpu

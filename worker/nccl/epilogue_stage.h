// The epilogue of one prepared choice whose problem has one (issue 16): its residual and
// weight buffers, the separate kernel after an unfused all-reduce, the fused launch, and
// the check against the independent fp32 reference. Residual slices mirror the receive
// slices, so a rotating round touches a fresh residual with each fresh output. Fused
// two-shot writes every rank's residual, so fused choices keep it in peer memory, in the
// buffer set's staging area, before LL's staging lines.
#pragma once

#include <cstdint>
#include <memory>

#include "core/kernels/epilogue_kernels.h"
#include "core/kernels/kernels.h"
#include "core/plan/problem.h"
#include "worker/nccl/buffer_set.h"
#include "worker/nccl/gpu_names.h"

namespace ccltune::worker::nccl {

class EpilogueStage {
 public:
  // Staging bytes a fused choice asks BufferSet::CreateOnPeers for (residual slices, then
  // the kernel's own staging); 0 for an unfused one.
  static std::uint64_t PeerStagingBytes(const ChoiceSpec& spec, const core::Problem& problem,
                                        const BufferLayout& layout, int world);
  static core::Result<std::unique_ptr<EpilogueStage>> Create(const core::Problem& problem,
                                                             const ChoiceSpec& spec,
                                                             const BufferLayout& layout);

  // The weight and the first `slices` residual slices, as data generation `generation`.
  core::Status Fill(const BufferSet& buffers, std::uint64_t generation, int slices,
                    cudaStream_t stream) const;
  // Unfused: the separate kernel on `slice`'s receive buffer, normalised in place.
  core::Status After(const BufferSet& buffers, int slice, cudaStream_t stream) const;
  // Fused: the all-reduce and the epilogue in one peer launch.
  core::Status Fused(const BufferSet& buffers, int slice, const kernels::PeerTeam& team,
                     cudaStream_t stream) const;
  // Enqueues the reference of `generation` and the comparisons of slice 0's output and
  // residual with it; `out`/`residual` (host-mapped) receive the first mismatches.
  core::Status EnqueueCheck(const BufferSet& buffers, std::uint64_t generation, int world,
                            kernels::Mismatch* out, kernels::Mismatch* residual,
                            cudaStream_t stream);

 private:
  EpilogueStage() = default;
  static std::size_t ResidualOffset(const BufferSet& buffers, int slice);
  void* Residual(const BufferSet& buffers, int slice) const;

  core::Epilogue epilogue_;
  core::Dtype dtype_ = core::Dtype::kBf16;
  std::uint64_t tokens_ = 0;
  ChoiceSpec spec_;
  DeviceBuffer weight_;
  DeviceBuffer residual_;  // unfused: slices x receive stride
  DeviceBuffer want_out_;  // the reference, allocated once Verify runs
  DeviceBuffer want_residual_;
};

}  // namespace ccltune::worker::nccl

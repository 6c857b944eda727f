// The epilogue of one prepared choice (epilogue_stage.h).
#include "worker/nccl/epilogue_stage.h"

#include "core/gpu/epilogue_enqueue.h"

namespace ccltune::worker::nccl {

std::uint64_t EpilogueStage::PeerStagingBytes(const ChoiceSpec& spec, const core::Problem& problem,
                                              const BufferLayout& layout, int world) {
  if (!spec.fused) return 0;
  const std::uint64_t tokens = problem.epilogue.Tokens(problem.bytes, problem.dtype);
  return layout.recv_stride * static_cast<std::uint64_t>(layout.slices) +
         gpu::FusedStaging(spec, tokens, problem.epilogue.hidden, problem.dtype, world);
}

core::Result<std::unique_ptr<EpilogueStage>> EpilogueStage::Create(const core::Problem& problem,
                                                                   const ChoiceSpec& spec,
                                                                   const BufferLayout& layout) {
  std::unique_ptr<EpilogueStage> s(new EpilogueStage());
  s->epilogue_ = problem.epilogue;
  s->dtype_ = problem.dtype;
  s->tokens_ = problem.epilogue.Tokens(problem.bytes, problem.dtype);
  s->spec_ = spec;
  if (s->tokens_ == 0) {
    return core::InvalidArgument(problem.Key() + ": bytes are no whole number of rows");
  }
  CCLTUNE_ASSIGN_OR_RETURN(
      s->weight_, DeviceBuffer::Allocate(s->epilogue_.RowBytes(s->dtype_), MemoryKind::kCuda));
  if (!spec.fused) {
    CCLTUNE_ASSIGN_OR_RETURN(
        s->residual_,
        DeviceBuffer::Allocate(layout.recv_stride * static_cast<std::size_t>(layout.slices),
                               MemoryKind::kCuda));
  }
  return s;
}

// Where `slice`'s residual starts in a residual region (peer staging or our own buffer).
std::size_t EpilogueStage::ResidualOffset(const BufferSet& buffers, int slice) {
  return buffers.layout().recv_stride * static_cast<std::size_t>(slice);
}

// Our residual of `slice`.
void* EpilogueStage::Residual(const BufferSet& buffers, int slice) const {
  void* base = spec_.fused ? buffers.staging() : residual_.data();
  return static_cast<char*>(base) + ResidualOffset(buffers, slice);
}

core::Status EpilogueStage::Fill(const BufferSet& buffers, std::uint64_t generation, int slices,
                                 cudaStream_t stream) const {
  CCLTUNE_CUDA_TRY(kernels::LaunchRandomFill(weight_.data(), epilogue_.hidden, dtype_,
                                             kernels::kWeightFillRank, generation, 0, stream));
  if (epilogue_.kind != core::EpilogueKind::kResidualRmsNorm) return core::Status::Ok();
  // Every rank fills the same values (a pseudo-rank of their own), as tensor parallelism
  // keeps the residual replicated.
  CCLTUNE_CUDA_TRY(kernels::LaunchRandomFill(Residual(buffers, 0), tokens_ * epilogue_.hidden,
                                             dtype_, kernels::kResidualFillRank, generation, 0,
                                             stream));
  return CopySliceZeroToAll(Residual(buffers, 0), buffers.layout().recv_stride, slices, stream);
}

core::Status EpilogueStage::After(const BufferSet& buffers, int slice, cudaStream_t stream) const {
  void* out = buffers.recv(slice);
  return gpu::EnqueueEpilogue(gpu::EpilogueParamsOf(epilogue_, weight_.data()), out,
                              Residual(buffers, slice), out, tokens_, dtype_, stream);
}

core::Status EpilogueStage::Fused(const BufferSet& buffers, int slice,
                                  const kernels::PeerTeam& team, cudaStream_t stream) const {
  const kernels::PeerOperands ops = buffers.Operands(slice);
  const std::size_t residual = ResidualOffset(buffers, slice);
  const std::size_t ll = ResidualOffset(buffers, buffers.layout().slices);  // past them all
  kernels::FusedOperands f;
  for (int r = 0; r < team.world; ++r) {
    f.in[r] = ops.in[r];
    f.out[r] = ops.out[r];
    f.residual[r] = static_cast<char*>(ops.staging[r]) + residual;
    f.staging[r] = static_cast<char*>(ops.staging[r]) + ll;
  }
  return gpu::EnqueueFused(spec_, team, f, tokens_,
                           gpu::EpilogueParamsOf(epilogue_, weight_.data()), dtype_, stream);
}

core::Status EpilogueStage::EnqueueCheck(const BufferSet& buffers, std::uint64_t generation,
                                         int world, kernels::Mismatch* out,
                                         kernels::Mismatch* residual, cudaStream_t stream) {
  const std::size_t bytes = epilogue_.RowBytes(dtype_) * tokens_;
  if (!want_out_.data()) {
    CCLTUNE_ASSIGN_OR_RETURN(want_out_, DeviceBuffer::Allocate(bytes, MemoryKind::kCuda));
    CCLTUNE_ASSIGN_OR_RETURN(want_residual_, DeviceBuffer::Allocate(bytes, MemoryKind::kCuda));
  }
  const kernels::EpilogueParams p = gpu::EpilogueParamsOf(epilogue_, nullptr);
  CCLTUNE_CUDA_TRY(kernels::LaunchEpilogueExpected(p, want_out_.data(), want_residual_.data(),
                                                   tokens_, world, generation, dtype_, stream));
  const std::uint64_t n = tokens_ * epilogue_.hidden;
  const double tol = core::VerifyTolerance(dtype_);
  CCLTUNE_CUDA_TRY(
      kernels::LaunchCompare(buffers.recv(0), want_out_.data(), n, dtype_, tol, out, stream));
  if (epilogue_.kind != core::EpilogueKind::kResidualRmsNorm) return core::Status::Ok();
  CCLTUNE_CUDA_TRY(kernels::LaunchCompare(Residual(buffers, 0), want_residual_.data(), n, dtype_,
                                          tol, residual, stream));
  return core::Status::Ok();
}

}  // namespace ccltune::worker::nccl

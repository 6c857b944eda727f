// Peer-choice enqueue (peer_enqueue.h).
#include "core/gpu/peer_enqueue.h"

#include "core/gpu/cuda_check.h"

namespace ccltune::gpu {

kernels::PeerAlgo PeerAlgoFor(const apply::ChoiceSpec& spec, core::Op op) {
  switch (spec.peer) {
    case apply::PeerKind::kTwoShot:
      return op == core::Op::kReduceScatter ? kernels::PeerAlgo::kReduceScatter
                                            : kernels::PeerAlgo::kTwoShot;
    case apply::PeerKind::kCopyKernel:
    case apply::PeerKind::kCopyEngine:
      return kernels::PeerAlgo::kAllGather;
    default:
      return kernels::PeerAlgo::kOneShot;
  }
}

kernels::PeerShape PeerShapeOf(const apply::ChoiceSpec& spec) {
  return {spec.blocks, spec.threads, spec.push, spec.ll, spec.unroll};
}

core::Result<DeviceBuffer> UnvouchedDirectSlot(cudaStream_t stream) {
  CCLTUNE_ASSIGN_OR_RETURN(DeviceBuffer slot,
                           DeviceBuffer::Allocate(sizeof(kernels::DirectSlot), MemoryKind::kCuda));
  CCLTUNE_CUDA_TRY(cudaMemsetAsync(slot.data(), 0, sizeof(kernels::DirectSlot), stream));
  return slot;
}

core::Result<PeerEnqueuer> PeerEnqueuer::Create(const apply::ChoiceSpec& spec,
                                                const OpShape& shape) {
  PeerEnqueuer e;
  e.spec_ = spec;
  e.shape_ = shape;
  e.algo_ = PeerAlgoFor(spec, shape.op);
  if (spec.peer != apply::PeerKind::kCopyEngine) return e;
  CCLTUNE_ASSIGN_OR_RETURN(e.fork_, Event::CreateForOrdering());
  for (int d = 1; d < shape.world; ++d) {
    CCLTUNE_ASSIGN_OR_RETURN(Stream s, Stream::Create());
    CCLTUNE_ASSIGN_OR_RETURN(Event j, Event::CreateForOrdering());
    e.sides_.push_back(std::move(s));
    e.joins_.push_back(std::move(j));
  }
  return e;
}

core::Status PeerEnqueuer::Enqueue(const kernels::PeerTeam& team, const kernels::PeerOperands& ops,
                                   cudaStream_t stream) const {
  if (spec_.peer == apply::PeerKind::kCopyEngine) return EnqueueCopyEngines(team, ops, stream);
  const kernels::PeerShape grid = PeerShapeOf(spec_);
  CCLTUNE_CUDA_TRY(kernels::LaunchPeerCollective(algo_, team, ops, shape_.count, shape_.dtype,
                                                 shape_.redop, grid, stream));
  return core::Status::Ok();
}

// Barriers as in the copy kernel: before, so inputs are ready and outputs free; after, so
// every copy has landed and no input is still read.
core::Status PeerEnqueuer::EnqueueCopyEngines(const kernels::PeerTeam& team,
                                              const kernels::PeerOperands& ops,
                                              cudaStream_t stream) const {
  const std::size_t bytes = shape_.count * core::DtypeSize(shape_.dtype);
  const int me = team.rank;
  auto block = [&](void* base, int r) { return static_cast<char*>(base) + r * bytes; };
  CCLTUNE_CUDA_TRY(kernels::LaunchPeerBarrier(team, stream));
  CCLTUNE_CUDA_TRY(cudaEventRecord(fork_.get(), stream));
  for (int d = 1; d < team.world; ++d) {
    const int r = (me + d) % team.world;
    cudaStream_t side = sides_[d - 1].get();
    CCLTUNE_CUDA_TRY(cudaStreamWaitEvent(side, fork_.get(), 0));
    void* dst = spec_.push ? block(ops.out[r], me) : block(ops.out[me], r);
    const void* src = spec_.push ? ops.in[me] : ops.in[r];
    CCLTUNE_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, side));
    CCLTUNE_CUDA_TRY(cudaEventRecord(joins_[d - 1].get(), side));
  }
  CCLTUNE_CUDA_TRY(
      cudaMemcpyAsync(block(ops.out[me], me), ops.in[me], bytes, cudaMemcpyDeviceToDevice, stream));
  for (const Event& j : joins_) CCLTUNE_CUDA_TRY(cudaStreamWaitEvent(stream, j.get(), 0));
  CCLTUNE_CUDA_TRY(kernels::LaunchPeerBarrier(team, stream));
  return core::Status::Ok();
}

}  // namespace ccltune::gpu

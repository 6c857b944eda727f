// The hierarchical all-reduce's three phases (hier_enqueue.h).
#include "core/gpu/hier_enqueue.h"

#include "core/gpu/cuda_check.h"
#include "core/gpu/launch.h"
#include "core/gpu/nccl_api.h"
#include "core/gpu/peer_enqueue.h"

namespace ccltune::gpu {

core::Result<HierAllReduce> HierAllReduce::Create(const apply::ChoiceSpec& spec,
                                                  std::uint64_t count, core::Dtype dtype,
                                                  core::RedOp redop, int local_rank,
                                                  int local_ranks) {
  if (spec.compose != apply::Composition::kHierarchical) {
    return core::InvalidArgument("HierAllReduce: not a hier choice");
  }
  if (local_ranks < 2 || local_ranks > kernels::kMaxPeers || local_rank < 0 ||
      local_rank >= local_ranks) {
    return core::InvalidArgument("hier: local rank " + std::to_string(local_rank) + " of " +
                                 std::to_string(local_ranks) + " (2 to " +
                                 std::to_string(kernels::kMaxPeers) + " ranks per node)");
  }
  const auto l = static_cast<std::uint64_t>(local_ranks);
  if (count == 0 || count % l != 0) {
    return core::InvalidArgument("hier: element count " + std::to_string(count) +
                                 " not a positive multiple of " + std::to_string(local_ranks) +
                                 " ranks per node");
  }
  HierAllReduce h;
  h.grid_ = PeerShapeOf(spec);  // pull, unroll 1: hier names only blocks and threads
  h.count_ = count;
  h.shard_ = count / l;
  h.dtype_ = dtype;
  h.redop_ = redop;
  h.local_rank_ = local_rank;
  h.local_ranks_ = local_ranks;
  return h;
}

void* HierAllReduce::Shard(const kernels::PeerOperands& ops, int r) const {
  return static_cast<char*>(ops.out[r]) +
         static_cast<std::uint64_t>(r) * shard_ * core::DtypeSize(dtype_);
}

core::Status HierAllReduce::Enqueue(int phase, const kernels::PeerTeam& node,
                                    const kernels::PeerOperands& ops, ncclComm_t across,
                                    cudaStream_t stream) const {
  if (node.world != local_ranks_ || node.rank != local_rank_) {
    return core::InvalidArgument("hier: the peer team is not this rank's node");
  }
  kernels::PeerOperands part;
  for (int r = 0; r < local_ranks_; ++r) {
    // Phase 0 reduces every input's shard `rank` into our shard; phase 2 reads shard r at
    // its place in rank r's output into the same place of ours (our own in place).
    part.in[r] = phase == 0 ? ops.in[r] : Shard(ops, r);
    part.out[r] = phase == 0 ? Shard(ops, r) : ops.out[r];
  }
  switch (phase) {
    case 0:
      CCLTUNE_CUDA_TRY(kernels::LaunchPeerCollective(kernels::PeerAlgo::kReduceScatter, node, part,
                                                     shard_, dtype_, redop_, grid_, stream));
      return core::Status::Ok();
    case 1: {
      void* mine = Shard(ops, local_rank_);
      CCLTUNE_NCCL_TRY(across, Nccl().AllReduce(mine, mine, shard_, NcclType(dtype_),
                                                NcclRedOp(redop_), across, stream));
      return core::Status::Ok();
    }
    case 2:
      CCLTUNE_CUDA_TRY(kernels::LaunchPeerCollective(kernels::PeerAlgo::kAllGather, node, part,
                                                     shard_, dtype_, redop_, grid_, stream));
      return core::Status::Ok();
    default:
      return core::InvalidArgument("hier: phase " + std::to_string(phase) + " is not 0, 1 or 2");
  }
}

}  // namespace ccltune::gpu

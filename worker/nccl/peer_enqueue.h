// One op of a peer choice (oneshot, twoshot, p2p, ce, test-absent) put on a stream: the
// peer kernel, or for `ce` a barrier, one cudaMemcpyAsync per peer on its own stream (so
// the copy engines run in parallel; the fork/join is capturable in a CUDA graph) and a
// closing barrier.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "worker/kernels/peer_kernels.h"
#include "worker/nccl/choice_spec.h"
#include "worker/nccl/cuda_resources.h"
#include "worker/nccl/launch.h"

namespace ccltune::worker::nccl {

// choice_spec.h validates names without the CUDA headers; its bounds are the kernels'.
static_assert(kMaxPeerBlocksParam == kernels::kMaxPeerBlocks);
static_assert(kMaxReduceThreadsParam == kernels::kMaxReduceThreads);
static_assert(kMaxUnrollParam == kernels::kMaxUnroll);

class PeerEnqueuer {
 public:
  static core::Result<PeerEnqueuer> Create(const ChoiceSpec& spec, const OpShape& shape);
  core::Status Enqueue(const kernels::PeerTeam& team, const kernels::PeerOperands& ops,
                       cudaStream_t stream) const;

 private:
  core::Status EnqueueCopyEngines(const kernels::PeerTeam& team, const kernels::PeerOperands& ops,
                                  cudaStream_t stream) const;

  ChoiceSpec spec_;
  OpShape shape_;
  kernels::PeerAlgo algo_ = kernels::PeerAlgo::kOneShot;
  std::vector<Stream> sides_;  // ce: one per peer
  std::vector<Event> joins_;
  Event fork_;
};

kernels::PeerShape PeerShapeOf(const ChoiceSpec& spec);
// The kernel algorithm a spec runs for `op`.
kernels::PeerAlgo PeerAlgoFor(const ChoiceSpec& spec, core::Op op);

}  // namespace ccltune::worker::nccl

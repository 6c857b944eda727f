// One op of a peer choice (oneshot, twoshot, p2p, ce, test-absent) put on a stream: the
// peer kernel, or for `ce` a barrier, one cudaMemcpyAsync per peer on its own stream (so
// the copy engines run in parallel; the fork/join is capturable in a CUDA graph) and a
// closing barrier.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "core/apply/choice_spec.h"
#include "core/base/status.h"
#include "core/gpu/cuda_resources.h"
#include "core/gpu/launch.h"
#include "core/kernels/peer_kernels.h"

namespace ccltune::gpu {

// choice_spec.h validates names without the CUDA headers; its bounds are the kernels'.
static_assert(apply::kMaxPeerBlocksParam == kernels::kMaxPeerBlocks);
static_assert(apply::kMaxReduceThreadsParam == kernels::kMaxReduceThreads);
static_assert(apply::kMaxUnrollParam == kernels::kMaxUnroll);
static_assert(apply::kMaxPeersParam == kernels::kMaxPeers);
static_assert(apply::kHeldVectorsParam == kernels::kHeldVectors);

class PeerEnqueuer {
 public:
  static core::Result<PeerEnqueuer> Create(const apply::ChoiceSpec& spec, const OpShape& shape);
  core::Status Enqueue(const kernels::PeerTeam& team, const kernels::PeerOperands& ops,
                       cudaStream_t stream) const;

 private:
  core::Status EnqueueCopyEngines(const kernels::PeerTeam& team, const kernels::PeerOperands& ops,
                                  cudaStream_t stream) const;

  apply::ChoiceSpec spec_;
  OpShape shape_;
  kernels::PeerAlgo algo_ = kernels::PeerAlgo::kOneShot;
  std::vector<Stream> sides_;  // ce: one per peer
  std::vector<Event> joins_;
  Event fork_;
};

kernels::PeerShape PeerShapeOf(const apply::ChoiceSpec& spec);

// A direct slot (kernels::DirectSlot) that no rank vouches for: valid 0, in device memory,
// zeroed on `stream` (launches after it there, or after the caller waited for it, see it).
// PeerOperands::direct pointing at it makes a staged pull all-reduce copy in and out inside
// its own launch (apply::StagesInKernel). Allocates: never while a stream captures.
core::Result<DeviceBuffer> UnvouchedDirectSlot(cudaStream_t stream);
// The kernel algorithm a spec runs for `op`.
kernels::PeerAlgo PeerAlgoFor(const apply::ChoiceSpec& spec, core::Op op);

}  // namespace ccltune::gpu

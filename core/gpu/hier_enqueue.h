// The hierarchical all-reduce (`hier:blocks=B,threads=T`, docs/design.md §5, issue 33) over N nodes
// of L ranks, in three phases on one stream:
//   0. reduce-scatter inside the node with our kernel over peer memory: local rank l reduces
//      shard l (count / L elements) of every node rank's input into shard l of its output;
//   1. all-reduce of that shard across the nodes with NCCL, in place, on the communicator of
//      the ranks with local rank l (one per node);
//   2. all-gather inside the node with our copy kernel: every rank reads each node rank's
//      shard out of that rank's output into its own.
// Phases 0 and 2 run on the node's peer team (pull mode: each opens with an arrival barrier,
// so phase 2 starts everywhere only after every node rank's phase 1 finished, and closes with
// one, so no shard is overwritten while a peer still reads it); both buffers of the op must
// lie in the node's peer memory. Enqueue only: on a non-blocking communicator the caller waits
// for phase 1 to leave ncclInProgress.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>

#include "core/apply/choice_spec.h"
#include "core/base/status.h"
#include "core/kernels/peer_kernels.h"
#include "core/plan/types.h"

namespace ccltune::gpu {

class HierAllReduce {
 public:
  // `count`: the all-reduce's elements, divisible by `local_ranks` (node_span.h checks it);
  // `local_rank` of `local_ranks` is this rank's place in its node.
  static core::Result<HierAllReduce> Create(const apply::ChoiceSpec& spec, std::uint64_t count,
                                            core::Dtype dtype, core::RedOp redop, int local_rank,
                                            int local_ranks);

  static constexpr int kPhases = 3;
  // Phase `phase` (0, 1, 2) of one op: `node` is the node's peer team, `ops` its ranks' send
  // (in) and receive (out) buffers as mapped here, by local rank; `across` the communicator
  // of this local rank's ranks on the other nodes (phase 1 only).
  core::Status Enqueue(int phase, const kernels::PeerTeam& node, const kernels::PeerOperands& ops,
                       ncclComm_t across, cudaStream_t stream) const;

  std::uint64_t shard_count() const { return shard_; }

 private:
  // Local rank r's shard of its output, as mapped here.
  void* Shard(const kernels::PeerOperands& ops, int r) const;

  kernels::PeerShape grid_;
  std::uint64_t count_ = 0;
  std::uint64_t shard_ = 0;
  core::Dtype dtype_ = core::Dtype::kFp32;
  core::RedOp redop_ = core::RedOp::kSum;
  int local_rank_ = 0;
  int local_ranks_ = 1;
};

}  // namespace ccltune::gpu

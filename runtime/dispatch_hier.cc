// The hierarchical all-reduce per call (runtime_comm.h, issue 33): the call's input is copied
// into this rank's node scratch, gpu::HierAllReduce's three phases run there (our
// reduce-scatter over the node team, NCCL's all-reduce of the shard on the communicator of
// this local rank, our all-gather over the node team), and the result is copied out. The
// phases read the peers' scratch, never the call's buffers, so any buffer works (runnable.h).
//
// One scratch serves every call: between two calls no peer still reads ours, because each
// node phase closes with a barrier of the node's ranks (hier_enqueue.h), and hier's launches
// are ordered with every other peer launch of this communicator (OrderPeerLaunch), as one
// signal area requires.
#include "core/gpu/cuda_check.h"
#include "core/gpu/hier_enqueue.h"
#include "runtime/runtime_comm.h"
#include "runtime/waits.h"

namespace ccltune::runtime {

core::Status RuntimeComm::RunHier(const Call& call, const AppliedRun& run) {
  const int local = place_.local_rank;
  const int ranks = static_cast<int>(place_.node_ranks.size());
  CCLTUNE_ASSIGN_OR_RETURN(
      const gpu::HierAllReduce hier,
      gpu::HierAllReduce::Create(run.spec, call.count, *call.dtype, *call.redop, local, ranks));
  const std::uint64_t bytes = call.count * core::DtypeSize(*call.dtype);
  const std::uint64_t out_at = HierScratchBytes(bytes) / 2;  // Choose checked that both fit
  kernels::PeerOperands ops;
  for (int r = 0; r < ranks; ++r) {
    ops.in[r] = node_peers_->Data(r, 0);
    ops.out[r] = node_peers_->Data(r, out_at);
  }
  const kernels::PeerTeam team = KernelTeam(*node_peers_);
  const core::Deadline deadline = core::Clock::now() + config_.timeout;
  CCLTUNE_RETURN_IF_ERROR(OrderPeerLaunch(call.stream, /*before=*/true));
  CCLTUNE_CUDA_TRY(cudaMemcpyAsync(node_peers_->Data(local, 0), call.send, bytes,
                                   cudaMemcpyDeviceToDevice, call.stream));
  for (int phase = 0; phase < gpu::HierAllReduce::kPhases; ++phase) {
    CCLTUNE_RETURN_IF_ERROR(hier.Enqueue(phase, team, ops, across_comm_, call.stream));
    if (phase == 1) CCLTUNE_RETURN_IF_ERROR(WaitEnqueued(across_comm_, deadline, "hier enqueue"));
  }
  CCLTUNE_CUDA_TRY(
      cudaMemcpyAsync(call.recv, ops.out[local], bytes, cudaMemcpyDeviceToDevice, call.stream));
  return OrderPeerLaunch(call.stream, /*before=*/false);
}

}  // namespace ccltune::runtime

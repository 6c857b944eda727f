// Staged peer kernels (staged=1, core/apply/staged.h; issue 43): a kernel that reads or
// writes the peers' buffers runs on any buffer of the program, eager or captured in a CUDA
// graph, by copying the call's input into a region of peer memory first and, where the
// peers share the kernel's output, the result out of it after. The region is the call
// signature's staging partition (dispatch.cc: the same offset on every rank, zeroed and met
// at first use), laid out [input | output (copies.out) | push staging (push modes)]. The
// worker measured exactly these copies around the same kernel, so the tuned time holds.
//
// Reuse: the next call of the signature copies into the region again only after
// OrderPeerLaunch ordered it behind this call's kernel (LaunchPeer), and that kernel's last
// barrier means no peer reads this rank's region any more (pull), or its first barrier of
// the next launch guards the push staging (peer_reduce.cu). Inside a graph the graph's order
// holds.
#include "core/apply/staged.h"
#include "runtime/runtime_comm.h"

namespace ccltune::runtime {

core::Result<bool> RuntimeComm::RunStaged(const Call& call, const AppliedRun& run,
                                          const gpu::OpShape& shape, const std::string& signature) {
  const apply::StagedCopies copies = apply::StagedCopiesOf(run.spec, call.op);
  const std::size_t esize = core::DtypeSize(*call.dtype);
  const std::uint64_t in_bytes = SendElems(call.op, call.count, world_) * esize;
  const std::uint64_t out_bytes = RecvElems(call.op, call.count, world_) * esize;
  const std::uint64_t out_at = PartitionAligned(in_bytes);
  const std::uint64_t push_at = out_at + (copies.out ? PartitionAligned(out_bytes) : 0);
  const std::uint64_t push_bytes =
      kernels::StagingBytes(gpu::PeerAlgoFor(run.spec, call.op), gpu::PeerShapeOf(run.spec),
                            call.count, *call.dtype, world_);
  bool fits = true;
  CCLTUNE_ASSIGN_OR_RETURN(const std::size_t at,
                           StagingFor(signature, push_at + push_bytes, call.stream, &fits));
  if (!fits) return false;
  kernels::PeerOperands ops;
  for (int r = 0; r < world_; ++r) {
    ops.in[r] = peers_->Data(r, at);
    if (copies.out) ops.out[r] = peers_->Data(r, at + out_at);
    if (push_bytes > 0) ops.staging[r] = peers_->Data(r, at + push_at);
  }
  if (!copies.out) ops.out[rank_] = call.recv;  // only this rank writes it
  const PeerCopy in{peers_->Data(rank_, at), call.send, in_bytes};
  const PeerCopy out =
      copies.out ? PeerCopy{call.recv, peers_->Data(rank_, at + out_at), out_bytes} : PeerCopy{};
  CCLTUNE_RETURN_IF_ERROR(LaunchPeer(call, run, shape, signature, ops, in, out));
  return true;
}

}  // namespace ccltune::runtime

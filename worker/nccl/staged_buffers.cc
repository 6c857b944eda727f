// A staged choice's program buffers and copies (staged_buffers.h).
#include "worker/nccl/staged_buffers.h"

#include <cstdlib>
#include <string>

namespace ccltune::worker::nccl {
namespace {

bool EnvIsOne(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::string(v) == "1";
}

}  // namespace

core::Result<std::unique_ptr<StagedBuffers>> StagedBuffers::Create(const BufferLayout& layout,
                                                                   apply::StagedCopies copies,
                                                                   int peer_rank,
                                                                   cudaStream_t stream) {
  std::unique_ptr<StagedBuffers> s(new StagedBuffers());
  CCLTUNE_ASSIGN_OR_RETURN(s->app_, BufferSet::CreatePlain(layout));
  s->copies_ = copies;
  s->peer_rank_ = peer_rank;
  if (copies.slot) {
    CCLTUNE_ASSIGN_OR_RETURN(s->unvouched_, gpu::UnvouchedDirectSlot(stream));
  }
  s->drop_output_ =
      EnvIsOne("CCLTUNE_ENABLE_TEST_CHOICES") && EnvIsOne("CCLTUNE_TEST_STAGED_DROP_OUTPUT");
  return s;
}

core::Status StagedBuffers::Enqueue(const BufferSet& peers, int slice, cudaStream_t stream,
                                    const Kernel& kernel) const {
  const BufferLayout& l = app_->layout();
  if (copies_.in_kernel) {
    // The peers' slices stay the kernel's staged layout; it copies our input into ours and
    // its result into the program's output (or, test only, into its own staging).
    kernels::PeerOperands ops = peers.Operands(slice);
    ops.own_in = app_->send(slice);
    void* out = drop_output_ ? peers.recv(slice) : app_->recv(slice);
    if (copies_.slot) {
      ops.direct = static_cast<const kernels::DirectSlot*>(unvouched_.data());
      ops.own_out = out;
    } else {
      ops.out[peer_rank_] = out;  // only this rank writes it
    }
    return kernel(ops);
  }
  if (copies_.in) {
    CCLTUNE_CUDA_TRY(cudaMemcpyAsync(peers.send(slice), app_->send(slice), l.send_bytes,
                                     cudaMemcpyDeviceToDevice, stream));
  }
  kernels::PeerOperands ops = peers.Operands(slice);
  // Only this rank's pointer changes: the peers never touch this rank's output here.
  if (!copies_.out && !drop_output_) ops.out[peer_rank_] = app_->recv(slice);
  CCLTUNE_RETURN_IF_ERROR(kernel(ops));
  if (!copies_.out || drop_output_) return core::Status::Ok();
  CCLTUNE_CUDA_TRY(cudaMemcpyAsync(app_->recv(slice), peers.recv(slice), l.recv_bytes,
                                   cudaMemcpyDeviceToDevice, stream));
  return core::Status::Ok();
}

}  // namespace ccltune::worker::nccl

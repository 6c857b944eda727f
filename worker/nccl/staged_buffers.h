// The program's side of a staged peer choice (staged=1, core/apply/staged.h): plain device
// buffers with the layout of the kernel's peer buffers (the same slices, so the rotation
// past L2 still holds), standing for the tensors a program passes, and the copies that
// bracket the kernel the way the runtime runs it on those tensors. The kernel's own buffers
// stay in peer memory (BufferSet::CreateOnPeers); the choice fills and verifies these.
#pragma once

#include <functional>
#include <memory>

#include "core/apply/staged.h"
#include "core/base/status.h"
#include "core/kernels/kernels.h"
#include "worker/nccl/buffer_set.h"
#include "worker/nccl/gpu_names.h"

namespace ccltune::worker::nccl {

class StagedBuffers {
 public:
  using Kernel = std::function<core::Status(const kernels::PeerOperands&)>;

  // `peer_rank`: this rank's index in the peer kernel's operands. Allocates; an in-kernel
  // choice's slot is zeroed on `stream`.
  static core::Result<std::unique_ptr<StagedBuffers>> Create(const BufferLayout& layout,
                                                             apply::StagedCopies copies,
                                                             int peer_rank, cudaStream_t stream);

  // What the program gives and reads.
  const BufferSet& app() const { return *app_; }

  // One staged call on `slice`, enqueued on `stream` (also while it captures a graph): the
  // program's input copied into the peers' send slice, `kernel` on the peers' operands with
  // this rank's output the program's own where only this rank writes it, and the output
  // copied out of peer memory where the peers share it. In-kernel (apply::StagesInKernel):
  // `kernel` alone copies, given the program's buffers (and, all-reduce, a slot no rank
  // vouches for).
  core::Status Enqueue(const BufferSet& peers, int slice, cudaStream_t stream,
                       const Kernel& kernel) const;

 private:
  StagedBuffers() = default;

  std::unique_ptr<BufferSet> app_;
  apply::StagedCopies copies_;
  int peer_rank_ = 0;
  gpu::DeviceBuffer unvouched_;  // copies_.slot: the direct slot no rank vouches for
  // Test only (CCLTUNE_TEST_STAGED_DROP_OUTPUT=1 with CCLTUNE_ENABLE_TEST_CHOICES=1): the
  // kernel's output never reaches the program's buffer, so a GPU test sees Verify catch it.
  bool drop_output_ = false;
};

}  // namespace ccltune::worker::nccl

// RuntimeComm's teardown (runtime_comm.h).
#include "core/gpu/cuda_check.h"
#include "runtime/runtime_comm.h"
#include "runtime/waits.h"

namespace ccltune::runtime {

core::Status RuntimeComm::Finish() {
  DeviceGuard guard(device_);
  const core::Deadline deadline = core::Clock::now() + config_.timeout;
  core::Status met = dir_->AllGather("destroy", "", deadline).status();
  if (!met.ok()) {
    (void)peers_.release();  // a peer may still read it: leaked, not freed under it
    return met;
  }
  return WaitStream(stream_.get(), nccl_, deadline, "teardown");
}

RuntimeComm::~RuntimeComm() {
  DeviceGuard guard(device_);
  // The application finished its streams' work on them before destroying (as NCCL asks).
  for (auto& [n, comm] : ctas_comms_) (void)ncclCommDestroy(comm);
  enqueuers_.clear();
}

}  // namespace ccltune::runtime

// RuntimeComm's teardown (runtime_comm.h).
#include "core/gpu/cuda_check.h"
#include "core/gpu/nccl_api.h"
#include "runtime/runtime_comm.h"
#include "runtime/waits.h"

namespace ccltune::runtime {

core::Status RuntimeComm::Finish(bool* abandoned) {
  DeviceGuard guard(device_);
  const core::Deadline deadline = core::Clock::now() + config_.timeout;
  return RunBounded(
      [this, deadline]() -> core::Status {
        CCLTUNE_RETURN_IF_ERROR(dir_->AllGather("destroy", "", deadline).status());
        return WaitStream(stream_.get(), nccl_, deadline, "teardown");
      },
      deadline + std::chrono::seconds(1), abandoned);
}

core::Status RuntimeComm::Close(std::unique_ptr<RuntimeComm> comm) {
  if (!comm) return core::Status::Ok();
  bool abandoned = false;
  const core::Status finished = comm->Finish(&abandoned);
  if (abandoned || !finished.ok()) (void)comm.release();
  return finished;
}

void RuntimeComm::AbortChildren() {
  for (auto& [n, comm] : ctas_comms_) (void)gpu::Nccl().CommAbort(comm);
  ctas_comms_.clear();
}

RuntimeComm::~RuntimeComm() {
  DeviceGuard guard(device_);
  // The application finished its streams' work on them before destroying (as NCCL asks).
  for (auto& [n, comm] : ctas_comms_) (void)gpu::Nccl().CommDestroy(comm);
  enqueuers_.clear();
}

}  // namespace ccltune::runtime

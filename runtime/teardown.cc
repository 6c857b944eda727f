// RuntimeComm's teardown (runtime_comm.h).
#include <cuda_runtime.h>

#include <cstdio>

#include "core/gpu/cuda_check.h"
#include "core/gpu/nccl_api.h"
#include "runtime/clique_parking.h"
#include "runtime/runtime_comm.h"
#include "runtime/waits.h"

namespace ccltune::runtime {
namespace {

// Never destroyed: a clique still parked at exit is left to the process's end, not freed
// by static destructors after CUDA may be gone.
CliqueParking<RuntimeComm>& Parking() {
  static auto* parking = new CliqueParking<RuntimeComm>();
  return *parking;
}

// The last rank of a one-process clique frees every rank's context once each of their GPUs
// is idle: the application finished its work on them before destroying (NCCL asks the
// same), our kernels end within their own bound, and so no peer still reads memory freed
// here. The NCCL communicators of earlier ranks may be gone already: nothing here uses
// them. A sync that does not end in time leaks the clique instead.
core::Status FreeClique(std::vector<std::unique_ptr<RuntimeComm>> clique,
                        std::chrono::milliseconds timeout, std::vector<int> devices) {
  bool abandoned = false;
  const core::Status idle = RunBounded(
      [devices]() -> core::Status {
        for (int d : devices) {
          DeviceGuard guard(d);
          CCLTUNE_CUDA_TRY(cudaDeviceSynchronize());
        }
        return core::Status::Ok();
      },
      core::Clock::now() + timeout, &abandoned);
  if (abandoned || !idle.ok()) {
    for (auto& c : clique) (void)c.release();
    return idle.WithContext("one-process teardown: GPUs not idle; contexts leaked");
  }
  clique.clear();
  return core::Status::Ok();
}

}  // namespace

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
  if (comm->OneProcess()) {
    const std::string key = comm->clique_;
    const int world = comm->world_;
    const std::chrono::milliseconds timeout = comm->config_.timeout;
    std::vector<std::unique_ptr<RuntimeComm>> clique = Parking().Park(key, world, std::move(comm));
    if (clique.empty()) return core::Status::Ok();  // peers destroy later
    std::vector<int> devices;
    for (const auto& c : clique) devices.push_back(c->device_);
    return FreeClique(std::move(clique), timeout, std::move(devices));
  }
  bool abandoned = false;
  const core::Status finished = comm->Finish(&abandoned);
  if (abandoned || !finished.ok()) (void)comm.release();
  return finished;
}

void RuntimeComm::Drop(std::unique_ptr<RuntimeComm> comm) {
  if (!comm) return;
  comm->AbortChildren();
  // Peers of this process may still be in a kernel on our memory: leak it. Across
  // processes each rank's memory outlives its owner while a peer maps it.
  if (comm->OneProcess()) (void)comm.release();
}

void RuntimeComm::AbortChildren() {
  for (auto& [n, comm] : ctas_comms_) (void)gpu::Nccl().CommAbort(comm);
  ctas_comms_.clear();
  AbortNodeTeam();
}

RuntimeComm::~RuntimeComm() {
  DeviceGuard guard(device_);
  // The application finished its streams' work on them before destroying (as NCCL asks).
  for (auto& [n, comm] : ctas_comms_) (void)gpu::Nccl().CommDestroy(comm);
  for (ncclComm_t comm : {across_comm_, node_comm_}) {
    if (comm != nullptr) (void)gpu::Nccl().CommDestroy(comm);
  }
  enqueuers_.clear();
}

}  // namespace ccltune::runtime

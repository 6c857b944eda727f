// Bounded waits on NCCL and a stream (waits.h).
#include "runtime/waits.h"

#include <chrono>
#include <thread>

#include "core/gpu/cuda_check.h"
#include "core/gpu/nccl_api.h"

namespace ccltune::runtime {
namespace {

// ncclInProgress: still enqueueing; any other non-success is the communicator's error.
core::Result<bool> NcclReady(ncclComm_t comm) {
  ncclResult_t state = ncclSuccess;
  const ncclResult_t got = gpu::Nccl().CommGetAsyncError(comm, &state);
  if (got != ncclSuccess)
    return gpu::NcclError(got, comm, "ncclCommGetAsyncError", __FILE__, __LINE__);
  if (state == ncclInProgress) return false;
  if (state != ncclSuccess)
    return gpu::NcclError(state, comm, "the communicator", __FILE__, __LINE__);
  return true;
}

// Short waits spin (yielding): init's collectives take tens of µs; long ones back off.
void Pause(core::Clock::time_point started) {
  if (core::Clock::now() - started < std::chrono::milliseconds(2)) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// Polls `query` (cudaStreamQuery or cudaEventQuery) until the work is done, while the
// communicator stays healthy.
template <class Query>
core::Status WaitDone(const Query& query, ncclComm_t comm, core::Deadline deadline,
                      const std::string& what) {
  const auto started = core::Clock::now();
  for (;;) {
    const cudaError_t q = query();
    if (q == cudaSuccess) return core::Status::Ok();
    if (q != cudaErrorNotReady) return gpu::CudaError(q, what.c_str(), __FILE__, __LINE__);
    CCLTUNE_RETURN_IF_ERROR(NcclReady(comm).status().WithContext(what));
    if (core::Expired(deadline)) {
      return core::TimeoutError(what + ": not every rank arrived within the timeout");
    }
    Pause(started);
  }
}

}  // namespace

core::Status WaitEnqueued(ncclComm_t comm, core::Deadline deadline, const std::string& what) {
  const auto started = core::Clock::now();
  for (;;) {
    CCLTUNE_ASSIGN_OR_RETURN(bool ready, NcclReady(comm));
    if (ready) return core::Status::Ok();
    if (core::Expired(deadline)) return core::TimeoutError(what + ": NCCL still enqueueing");
    Pause(started);
  }
}

core::Status WaitStream(cudaStream_t stream, ncclComm_t comm, core::Deadline deadline,
                        const std::string& what) {
  return WaitDone([stream] { return cudaStreamQuery(stream); }, comm, deadline, what);
}

core::Status WaitEvent(cudaEvent_t event, ncclComm_t comm, core::Deadline deadline,
                       const std::string& what) {
  return WaitDone([event] { return cudaEventQuery(event); }, comm, deadline, what);
}

}  // namespace ccltune::runtime

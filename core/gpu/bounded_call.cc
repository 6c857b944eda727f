// A call made on a helper thread, waited for until a deadline (bounded_call.h).
#include "core/gpu/bounded_call.h"

#include <cuda_runtime.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace ccltune::gpu {

core::Status RunBounded(std::function<core::Status()> work, core::Deadline deadline,
                        bool* abandoned) {
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    core::Status status;
  };
  auto shared = std::make_shared<Shared>();
  int device = 0;
  (void)cudaGetDevice(&device);
  std::thread([shared, device, work = std::move(work)] {
    (void)cudaSetDevice(device);
    core::Status st = work();
    std::lock_guard<std::mutex> lock(shared->mu);
    shared->status = std::move(st);
    shared->done = true;
    shared->cv.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lock(shared->mu);
  if (shared->cv.wait_until(lock, deadline, [&] { return shared->done; })) {
    *abandoned = false;
    return shared->status;
  }
  *abandoned = true;
  return core::TimeoutError(
      "not every rank arrived within the timeout (the NCCL communicator may be stuck in a "
      "collective: abort it with ncclCommAbort)");
}

}  // namespace ccltune::gpu

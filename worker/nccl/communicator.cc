// NCCL communicators with bounded waits (communicator.h).
#include "worker/nccl/communicator.h"

#include <chrono>
#include <memory>
#include <thread>

#include "worker/nccl/gpu_names.h"

namespace ccltune::worker::nccl {

core::Status PollUntil(const std::function<core::Result<bool>()>& done, Deadline deadline,
                       const CancelToken& cancel, const std::string& what) {
  // Spin (yielding) for the first milliseconds: an enqueue leaves ncclInProgress and a
  // µs-scale op completes within tens of µs, and sleep_for(20 µs) really sleeps ~60-100 µs,
  // which would put host latency into eager rounds and skew between ranks into barriers.
  // Longer waits back off to ~20 µs sleeps.
  constexpr auto kSpinFor = std::chrono::milliseconds(2);
  constexpr auto kPollPeriod = std::chrono::microseconds(20);
  const auto spin_until = Clock::now() + kSpinFor;
  for (;;) {
    core::Result<bool> r = done();
    if (!r.ok()) return r.status().WithContext(what);
    if (r.value()) return core::Status::Ok();
    CCLTUNE_RETURN_IF_ERROR(cancel.Check().WithContext(what));
    const auto now = Clock::now();
    if (now >= deadline) return core::TimeoutError(what + ": deadline passed");
    if (now < spin_until) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(kPollPeriod);
    }
  }
}

ncclConfig_t MakeConfig(const CommOptions& options) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = options.blocking ? 1 : 0;
  if (options.ctas > 0) {
    config.minCTAs = options.ctas;
    config.maxCTAs = options.ctas;
  }
  return config;
}

core::Result<std::shared_ptr<Communicator>> Communicator::Init(int world, int rank,
                                                               const ncclUniqueId& id,
                                                               const CommOptions& options,
                                                               Deadline deadline,
                                                               const CancelToken& cancel) {
  // Its init would block on every peer, past any deadline.
  if (options.blocking) return core::InvalidArgument("only a split child can be blocking");
  ncclConfig_t config = MakeConfig(options);
  ncclComm_t comm = nullptr;
  const ncclResult_t res = ncclCommInitRankConfig(&comm, world, id, rank, &config);
  // Own the handle before checking: a failed init still needs its abort.
  std::shared_ptr<Communicator> c(new Communicator(comm));
  if (res != ncclSuccess && res != ncclInProgress) {
    return NcclError(res, comm, "ncclCommInitRankConfig", __FILE__, __LINE__);
  }
  CCLTUNE_RETURN_IF_ERROR(c->WaitReady(deadline, cancel, "communicator init"));
  return c;
}

core::Result<std::shared_ptr<Communicator>> Communicator::Split(int color, int key,
                                                                const CommOptions& options,
                                                                Deadline deadline,
                                                                const CancelToken& cancel) {
  CCLTUNE_RETURN_IF_ERROR(WaitReady(deadline, cancel, "before split"));
  ncclConfig_t config = MakeConfig(options);
  // On a non-blocking parent NCCL's split job writes the child handle from its own thread
  // when it completes: the slot lives on the heap and is leaked if we stop waiting first.
  auto slot = std::make_unique<ncclComm_t>(nullptr);
  const ncclResult_t res = ncclCommSplit(comm_, color, key, slot.get(), &config);
  if (res != ncclSuccess && res != ncclInProgress) {
    return NcclError(res, comm_, "ncclCommSplit", __FILE__, __LINE__);
  }
  core::Status parent_done = WaitReady(deadline, cancel, "communicator split");
  if (!parent_done.ok()) {
    (void)slot.release();
    return parent_done;
  }
  if (*slot == nullptr) return core::Internal("ncclCommSplit completed without a communicator");
  std::shared_ptr<Communicator> c(new Communicator(*slot));
  CCLTUNE_RETURN_IF_ERROR(c->WaitReady(deadline, cancel, "split communicator init"));
  return c;
}

void Communicator::Abort() {
  if (comm_ != nullptr && !aborted_) (void)ncclCommAbort(comm_);
  aborted_ = true;
}

core::Result<bool> Communicator::Ready() const {
  if (aborted_ || comm_ == nullptr) return core::Aborted("communicator was aborted");
  ncclResult_t state = ncclSuccess;
  const ncclResult_t res = ncclCommGetAsyncError(comm_, &state);
  if (res != ncclSuccess) return NcclError(res, comm_, "ncclCommGetAsyncError", __FILE__, __LINE__);
  if (state == ncclInProgress) return false;
  if (state != ncclSuccess) {
    return NcclError(state, comm_, "communicator async error", __FILE__, __LINE__);
  }
  return true;
}

core::Status Communicator::WaitReady(Deadline deadline, const CancelToken& cancel,
                                     const std::string& what) {
  return PollUntil([this] { return Ready(); }, deadline, cancel, what);
}

}  // namespace ccltune::worker::nccl

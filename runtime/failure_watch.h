// How the program learns that one of a communicator's peer kernels gave up on a peer
// (issue 36). With fail_stop the kernel traps (core/kernels/peer_sync.cuh says why), and
// the GPU context's next synchronisation fails with CUDA's words only. What ccltune adds:
// the host-mapped words the kernel wrote before its trap, read here, so that one line on
// stderr, AsyncError() / ccltuneCommGetAsyncError / ccltuneGetLastError and libccltune-nccl's
// ncclCommGetAsyncError / ncclGetLastError name ccltune, the communicator, the ranks that
// did not arrive and the timeout. Those words are plain host memory, readable after the
// context died; a CUDA graph replay makes no host call into ccltune, hence the thread.
// No GPU here (unit-tested with a plain array).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace ccltune::runtime {

// Who failed, for the message.
struct FailureContext {
  std::string comm;  // the application's NCCL communicator, as printed ("0x...")
  int rank = 0;
  int world = 1;
  std::chrono::milliseconds timeout{0};
};

// "ccltune: communicator 0x... (rank 1 of 4): rank(s) 3 did not arrive within 30000 ms ..."
std::string FailureMessage(const FailureContext& context, const std::vector<int>& missing);

// A communicator's failure, once known: set once, never cleared. Shared, so libccltune-nccl
// can ask without the communicator's lock (PyTorch's watchdog polls from its own thread)
// and after the communicator's context is gone.
class CommFailure {
 public:
  bool failed() const noexcept { return failed_.load(std::memory_order_acquire); }
  // Empty until failed(), then fixed.
  std::string message() const;
  // The first call sets it and returns true; later ones change nothing.
  bool Set(std::string message);

 private:
  mutable std::mutex mu_;
  std::string message_;
  std::atomic<bool> failed_{false};
};

class FailureWatch {
 public:
  // True once a wait ran out, with the ranks noted (gpu::PeerMemory's TimedOut() and
  // MissingRanks()). Called from the watch's thread and from Check()'s callers.
  using Probe = std::function<bool(std::vector<int>* missing)>;
  static constexpr std::chrono::milliseconds kPeriod{50};

  // Starts the thread: every `period` it runs Check() until a failure is found or this
  // object is destroyed (which stops it at once, not after a period, then checks once more).
  FailureWatch(Probe probe, FailureContext context, std::chrono::milliseconds period = kPeriod);
  ~FailureWatch();
  FailureWatch(const FailureWatch&) = delete;
  FailureWatch& operator=(const FailureWatch&) = delete;

  // The message once the probe reported a failure (empty before). The first to see it,
  // this call or the thread, prints it to stderr: one line per communicator.
  std::string Check();
  std::shared_ptr<const CommFailure> failure() const { return failure_; }

 private:
  void Run(std::stop_token stop);

  const Probe probe_;
  const FailureContext context_;
  const std::chrono::milliseconds period_;
  const std::shared_ptr<CommFailure> failure_ = std::make_shared<CommFailure>();
  std::mutex mu_;
  std::condition_variable_any wake_;
  std::jthread thread_;  // last: started after everything it reads
};

}  // namespace ccltune::runtime

// A communicator's failure: its message and the thread that finds it (failure_watch.h).
#include "runtime/failure_watch.h"

#include <cstdio>

namespace ccltune::runtime {

std::string FailureMessage(const FailureContext& c, const std::vector<int>& missing) {
  std::string who;
  for (int r : missing) who += (who.empty() ? "" : ", ") + std::to_string(r);
  who = who.empty() ? "a peer (rank not recorded)" : "rank(s) " + who;
  return "ccltune: communicator " + c.comm + " (rank " + std::to_string(c.rank) + " of " +
         std::to_string(c.world) + "): " + who + " did not arrive within " +
         std::to_string(c.timeout.count()) +
         " ms (the peer-wait timeout: ccltuneConfig_t.timeoutMs or CCLTUNE_TIMEOUT_MS); "
         "ccltune stopped this GPU context (device-side trap) so that no result computed "
         "without that peer reaches the program: abort the process group";
}

std::string CommFailure::message() const {
  std::lock_guard<std::mutex> lock(mu_);
  return message_;
}

bool CommFailure::Set(std::string message) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_.load(std::memory_order_relaxed)) return false;
  message_ = std::move(message);
  failed_.store(true, std::memory_order_release);
  return true;
}

FailureWatch::FailureWatch(Probe probe, FailureContext context, std::chrono::milliseconds period)
    : probe_(std::move(probe)),
      context_(std::move(context)),
      period_(period),
      thread_([this](std::stop_token stop) { Run(stop); }) {}

// The wait in Run wakes on the stop request at once. A last look after the thread is gone:
// a communicator destroyed or aborted right after its kernels failed (PyTorch's watchdog
// aborts within its own period) still says why, even if the thread had not looked yet.
FailureWatch::~FailureWatch() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
  (void)Check();
}

std::string FailureWatch::Check() {
  if (failure_->failed()) return failure_->message();
  std::vector<int> missing;
  if (!probe_(&missing)) return {};
  std::string message = FailureMessage(context_, missing);
  // Always printed (CCLTUNE_LOG=quiet silences notes, not this): a graph replay may give
  // the program nothing else naming ccltune.
  if (failure_->Set(message)) std::fprintf(stderr, "%s\n", message.c_str());
  return failure_->message();
}

void FailureWatch::Run(std::stop_token stop) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, stop, period_, [&] { return stop.stop_requested(); })) {
    lock.unlock();
    if (!Check().empty()) return;  // found: nothing more to watch
    lock.lock();
  }
}

}  // namespace ccltune::runtime

#include "worker/rendezvous/poll.h"

#include <algorithm>
#include <thread>

namespace ccltune::worker {

core::Status PollUntil(Deadline deadline, const CancelToken& cancel,
                       const std::function<core::Result<bool>()>& step,
                       const std::function<std::string()>& on_timeout, const PollOptions& options) {
  double interval = options.first_interval_seconds;
  while (true) {
    auto done = step();
    if (!done.ok()) return done.status();
    if (*done) return core::Status::Ok();
    CCLTUNE_RETURN_IF_ERROR(cancel.Check());
    const double left = SecondsLeft(deadline);
    if (left <= 0) return core::TimeoutError(on_timeout());
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(interval, left)));
    interval = std::min(interval * 2, options.max_interval_seconds);
  }
}

}  // namespace ccltune::worker

// The one wait loop of the worker's Redis-side waits: poll a condition with back-off until
// it holds, the deadline passes or the CancelToken fires. Never waits unbounded.
#pragma once

#include <functional>
#include <string>

#include "core/base/status.h"
#include "worker/deadline.h"

namespace ccltune::worker {

struct PollOptions {
  double first_interval_seconds = 0.001;
  double max_interval_seconds = 0.05;
};

// `step` returns true when done, false to keep waiting, or an error to stop. On deadline
// returns Timeout with `on_timeout()`'s message (computed then, so it can list who is late).
core::Status PollUntil(Deadline deadline, const CancelToken& cancel,
                       const std::function<core::Result<bool>()>& step,
                       const std::function<std::string()>& on_timeout,
                       const PollOptions& options = {});

}  // namespace ccltune::worker

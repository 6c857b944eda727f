// A call that may block in NCCL past any deadline (a blocking communicator's collective
// waits for every peer: NCCL connects peers lazily, at a communicator's first collective),
// made on a helper thread so that the caller's wait has a deadline. Shared by the runtime
// (init's and teardown's collectives) and the worker (the eager host rounds on blocking
// communicators).
#pragma once

#include <functional>

#include "core/base/deadline.h"
#include "core/base/status.h"

namespace ccltune::gpu {

// Runs `work` on a helper thread (on the caller's CUDA device) and waits for it until
// `deadline`. On Timeout `work` keeps running (it is stuck in NCCL until the communicator is
// aborted) and *abandoned is set: the caller must then leak whatever `work` touches rather
// than free it.
core::Status RunBounded(std::function<core::Status()> work, core::Deadline deadline,
                        bool* abandoned);

}  // namespace ccltune::gpu

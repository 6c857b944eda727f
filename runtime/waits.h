// The runtime's bounded waits on the application's NCCL communicator (which may be
// blocking or not): an enqueue leaving ncclInProgress, and a stream draining while the
// communicator stays healthy. They never abort the application's communicator: on Timeout
// the caller reports the error and the application decides (ncclCommAbort).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <functional>
#include <string>

#include "core/base/deadline.h"
#include "core/base/status.h"

namespace ccltune::runtime {

// Runs `work` on a helper thread and waits for it until `deadline`. An enqueue on a blocking
// NCCL communicator can block the host (NCCL connects peers lazily, at the first
// collective), so init's and teardown's collectives run this way: a peer that never
// arrives costs the caller the deadline, not a hang. On Timeout `work` keeps running (it
// is stuck in NCCL until the application aborts the communicator) and *abandoned is set:
// the caller must then leak whatever `work` touches rather than free it.
core::Status RunBounded(std::function<core::Status()> work, core::Deadline deadline,
                        bool* abandoned);

core::Status WaitEnqueued(ncclComm_t comm, core::Deadline deadline, const std::string& what);
core::Status WaitStream(cudaStream_t stream, ncclComm_t comm, core::Deadline deadline,
                        const std::string& what);

}  // namespace ccltune::runtime

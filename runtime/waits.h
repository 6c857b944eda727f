// The runtime's bounded waits on the application's NCCL communicator (which may be
// blocking or not): an enqueue leaving ncclInProgress, and a stream draining while the
// communicator stays healthy. They never abort the application's communicator: on Timeout
// the caller reports the error and the application decides (ncclCommAbort).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

#include "core/base/deadline.h"
#include "core/base/status.h"
#include "core/gpu/bounded_call.h"  // RunBounded, for init and teardown

namespace ccltune::runtime {

using gpu::RunBounded;

core::Status WaitEnqueued(ncclComm_t comm, core::Deadline deadline, const std::string& what);
core::Status WaitStream(cudaStream_t stream, ncclComm_t comm, core::Deadline deadline,
                        const std::string& what);
// The same for the work before `event`.
core::Status WaitEvent(cudaEvent_t event, ncclComm_t comm, core::Deadline deadline,
                       const std::string& what);

}  // namespace ccltune::runtime

// libccltune-nccl's side of issue 36: a communicator whose context's kernels gave up on a
// peer (and so stopped the GPU context) reports the error the way NCCL reports a lost peer,
// so the application's watchdog (PyTorch's) aborts the process group as it does for NCCL:
// ncclCommGetAsyncError says ncclRemoteError ("a remote process exited or a network error"),
// every intercepted collective on it returns ncclRemoteError instead of running or being
// forwarded, and ncclGetLastError gives the runtime's message (runtime/failure_watch.h).
#pragma once

#include <nccl.h>

#include "runtime/nccl_shim/comm_registry.h"

namespace ccltune::shim {

// ncclRemoteError once `e`'s context failed (the failure is then what ncclGetLastError
// gives), else ncclSuccess.
ncclResult_t FailedResult(const CommEntry& e);

// ncclCommGetAsyncError: true (and *error set) when the shim answers for `comm` itself.
bool AsyncErrorOf(ncclComm_t comm, ncclResult_t* error);

// ncclGetLastError: the message of `comm`'s failure, or for NULL (PyTorch asks so) of the
// last failure this process reported; NULL when the real NCCL should answer. Valid until
// this thread's next call.
const char* LastFailureText(ncclComm_t comm);

}  // namespace ccltune::shim

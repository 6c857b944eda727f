// libccltune-nccl's decisions: whether the shim is on, when a communicator gets its
// libccltune context, and for one collective call whether a tuned winner runs it or the real
// NCCL does, unchanged. Thread-safe.
#pragma once

#include <nccl.h>

#include <string>

#include "runtime/nccl_shim/comm_registry.h"
#include "runtime/nccl_shim/shim_switch.h"
#include "runtime/runtime_comm.h"

namespace ccltune::shim {

// CCLTUNE_NCCL unset, "on" or "1", a real NCCL found with the header's major.minor.
bool ShimOn();

// The application's call to the real NCCL, unchanged (made from the call's own arguments).
using ForwardFn = ncclResult_t (*)(const runtime::Call& call, ncclComm_t comm);

// Runs `call` (made on the application's `comm`) by the tuned winner, or returns
// forward(call, comm). A plain function pointer, not a closure: this is every call's path.
ncclResult_t Collective(const runtime::Call& call, ncclComm_t comm, ForwardFn forward);

// The communicator is going away: its context is torn down first (collectively and bounded
// unless `abort`), and for destroy and abort its summary line is written.
void Release(ncclComm_t comm, const char* how, bool abort, bool forget);

// For group_calls.cc. Makes `e`'s context (collective: every rank of `comm` is at this same
// point); the caller holds e.mu and e is untried.
void MakeContext(ncclComm_t comm, CommEntry& e);
bool Capturing(cudaStream_t stream);
std::string Describe(const runtime::Call& c);
ncclResult_t ResultOf(const core::Status& st);

// The blocking mode of a communicator made with `config` (NULL: `parent`'s, or
// NCCL_COMM_BLOCKING's default when there is no parent).
bool BlockingOf(const ncclConfig_t* config, const bool* parent);

}  // namespace ccltune::shim

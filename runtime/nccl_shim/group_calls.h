// Collectives between ncclGroupStart and ncclGroupEnd. One thread that drives several GPUs
// (nccl-tests -g N, programs on ncclCommInitAll) issues one call per communicator of a
// clique inside a group; NCCL would launch them together at ncclGroupEnd. The shim holds
// the group's all-reduce, all-gather and reduce-scatter calls until the outermost
// ncclGroupEnd and then either serves every one of them by our own kernels (launched one
// after another: each waits on the GPU, not the host, for its peers) or forwards every one,
// in order, into NCCL's still open group. Never half: a rank on our kernel and its peer in
// NCCL would wait for each other forever.
//
// Served only when: at least two calls, on distinct blocking communicators of ccltune-nccl,
// all the same collective (op, type, reduction, count), one call for every rank of those
// communicators (this thread drives the whole clique, so nothing waits on another thread),
// each with a context (made here, in parallel, one thread per communicator, when none exists and
// no stream is being captured), and each call's tuned choice is one of our kernels (NCCL's
// own, ctas or rs+ag choices need NCCL's group). A single communicator's group (PyTorch's
// coalesced collectives) is forwarded as before. Per thread, as NCCL's group depth is.
#pragma once

#include <nccl.h>

#include "runtime/nccl_shim/serve.h"

namespace ccltune::shim {

void EnterGroup();
// Returns true when this closed the outermost group: then FlushGroup must run before the
// real ncclGroupEnd.
bool LeaveGroup();
bool InGroup();

// Holds `call` until the group ends (ncclSuccess), or forwards it when the group already
// holds the most calls the shim keeps (then every later call of the group is forwarded).
ncclResult_t Defer(const runtime::Call& call, ncclComm_t comm, ForwardFn forward);

// Serves or forwards the calls held for the group that just ended; the first error of a
// forwarded call, or a serving error. `may_serve` false (ncclGroupSimulateEnd, which runs
// nothing): forwarded.
ncclResult_t FlushGroup(bool may_serve);

}  // namespace ccltune::shim

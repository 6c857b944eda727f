// An NCCL communicator that never blocks the caller past a deadline: created non-blocking
// (config.blocking = 0), every state change waited for by polling ncclCommGetAsyncError
// under a deadline and a CancelToken, and aborted (never finalized) on destruction, so a
// dead peer cannot hang teardown. The one exception, CommOptions::blocking, serves the eager
// host rounds (a program's communicator is blocking): its calls are made under
// gpu::RunBounded until it has connected. Shared by the backend and the choices that use it; the
// registrations of a choice look at aborted() before deregistering.
#pragma once

#include <nccl.h>

#include <functional>
#include <memory>
#include <string>

#include "core/base/status.h"
#include "worker/deadline.h"

namespace ccltune::worker::nccl {

// Calls `done` (spinning for 2 ms, then every ~20 µs) until it yields true, an error, the deadline
// (Timeout) or the token's cancellation. `what` names the wait in the message.
core::Status PollUntil(const std::function<core::Result<bool>()>& done, Deadline deadline,
                       const CancelToken& cancel, const std::string& what);

struct CommOptions {
  int ctas = 0;           // > 0: minCTAs = maxCTAs = ctas
  bool blocking = false;  // a split child only: its parent's split stays non-blocking
};

class Communicator {
 public:
  static core::Result<std::shared_ptr<Communicator>> Init(int world, int rank,
                                                          const ncclUniqueId& id,
                                                          const CommOptions& options,
                                                          Deadline deadline,
                                                          const CancelToken& cancel);
  // A child of the ranks that pass the same `color` (all of them when all pass 0), ordered
  // by `key`, with `options` (ncclCommSplit; collective over every rank of this one).
  core::Result<std::shared_ptr<Communicator>> Split(int color, int key, const CommOptions& options,
                                                    Deadline deadline, const CancelToken& cancel);
  ~Communicator() { Abort(); }
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  ncclComm_t get() const { return comm_; }
  bool aborted() const { return aborted_; }
  // ncclCommAbort; idempotent. Kernels of this communicator return soon after.
  void Abort();

  // true when the last operation finished enqueueing, false while ncclInProgress, an error
  // when the communicator failed (a peer died, an abort).
  core::Result<bool> Ready() const;
  core::Status WaitReady(Deadline deadline, const CancelToken& cancel, const std::string& what);

 private:
  explicit Communicator(ncclComm_t comm) : comm_(comm) {}
  ncclComm_t comm_ = nullptr;
  bool aborted_ = false;
};

ncclConfig_t MakeConfig(const CommOptions& options);

}  // namespace ccltune::worker::nccl

// A communicator backend ("host" over TCP, "nccl" on GPUs) as the bench runner sees it:
// a catalog of choices per problem, and a way to run one choice on one problem.
// The runner owns the measurement protocol (docs/design.md §2); a backend owns buffers, launches,
// timers and the reference check. Backends are used from one thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/node/fingerprint.h"
#include "core/plan/choice.h"
#include "core/plan/plan.h"
#include "core/plan/problem.h"
#include "worker/deadline.h"

namespace ccltune::worker {

struct ChoiceCandidate {
  core::ChoiceName name;
  std::string skip_reason;  // empty = applicable; else why it cannot run here
  // Which of a program's buffers it runs on: the bench runner sets it by
  // core/apply/any_buffer.h, the rule the runtime applies too.
  core::BufferReach reach = core::BufferReach::kAny;
  bool applicable() const { return skip_reason.empty(); }
};

// One choice bound to one problem; owns its buffers (RAII). Every method blocks until the
// work finished on this rank, the deadline passed (Timeout) or the token cancelled.
class PreparedChoice {
 public:
  virtual ~PreparedChoice() = default;
  virtual core::Status Warmup(int iters, Deadline deadline) = 0;
  // Readies timed rounds of `iters` ops: with CUDA graphs, captures that many and replays the
  // graph once, so the first timed round does not pay the upload. TimedRound also works
  // without it (capturing on demand). Nothing to do for an eager backend.
  virtual core::Status ReadyRounds(int iters, Deadline deadline) {
    (void)iters;
    (void)deadline;
    return core::Status::Ok();
  }
  // Starts the timer, runs `iters` back-to-back ops (or one graph replay holding them),
  // stops the timer, waits. Returns this rank's seconds per op.
  virtual core::Result<double> TimedRound(int iters, Deadline deadline) = 0;
  // The host's own seconds per op to issue `iters` ops as an eager program does, on a
  // communicator made as a program's is (blocking), while the GPU is held back so that no
  // launch waits on it. nullopt where the backend does not measure it (CUDA graphs, the host
  // backend). Collective: every rank calls it alike.
  virtual core::Result<std::optional<double>> HostRound(int iters, Deadline deadline) {
    (void)iters;
    (void)deadline;
    return std::optional<double>();
  }
  // One run on fresh pseudo-random data compared with the reference; a mismatch returns
  // FailedPrecondition whose message says where and by how much ("wrong: elem 17 ...").
  virtual core::Status Verify(Deadline deadline) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "host" | "nccl"
  virtual int rank() const = 0;
  virtual int world_size() const = 0;

  // Every catalog choice for the problem (or only the problem's requested ones), each
  // applicable or carrying its skip reason. The default choice always comes first.
  virtual std::vector<ChoiceCandidate> Candidates(const core::Problem& problem) = 0;
  virtual core::Result<std::unique_ptr<PreparedChoice>> Prepare(
      const core::Problem& problem, const core::ChoiceName& choice,
      const core::BenchmarkSpec& bench) = 0;

  // Barrier through the communicator itself (a 1-element all-reduce), not Redis.
  virtual core::Status Barrier(Deadline deadline) = 0;
  // Element-wise MAX across ranks of a few doubles (round times, error flags).
  virtual core::Result<std::vector<double>> AllReduceMax(const std::vector<double>& values,
                                                         Deadline deadline) = 0;
  // After a timeout or abort: drop the broken communicator and build a new one (all ranks
  // call it with the same epoch) so tuning goes on.
  virtual core::Status Recover(int epoch, Deadline deadline) = 0;

  virtual core::FingerprintInput FingerprintInfo() const = 0;
};

}  // namespace ccltune::worker

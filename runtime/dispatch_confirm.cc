// The in-program trial (confirm/trial_rule.h): the first eager calls of a tuned size on a
// program's own buffers go round the table's choice, its runner-up where it has one, and
// NCCL's own, an untimed round then N timed ones, each timed call between two events on the
// call's stream; the next call of that size collects the times, the ranks exchange their
// medians (one NcclDirectory exchange on the application's communicator, which every rank
// makes at the same call: collectives are issued in one order) and the winner rule decides,
// alike on every rank, what that size runs from then on.
//
// Waiting: the verdict's call waits for its own trial's events and for the exchange, bounded
// by the runtime's timeout, under this communicator's lock; once per tuned size, never again.
#include <cuda_runtime.h>

#include "core/apply/applied_choice.h"
#include "core/base/median.h"
#include "core/base/sizes.h"
#include "core/gpu/cuda_check.h"
#include "runtime/runtime_comm.h"
#include "runtime/runtime_note.h"
#include "runtime/waits.h"

namespace ccltune::runtime {
namespace {

// The median per call of (start, end) pairs, in µs.
core::Result<double> MedianUs(const std::vector<gpu::Event>& events, ncclComm_t comm,
                              core::Deadline deadline) {
  std::vector<double> us;
  for (std::size_t i = 0; i + 1 < events.size(); i += 2) {
    CCLTUNE_RETURN_IF_ERROR(
        WaitEvent(events[i + 1].get(), comm, deadline, "in-program trial: a timed call"));
    float ms = 0;
    CCLTUNE_CUDA_TRY(cudaEventElapsedTime(&ms, events[i].get(), events[i + 1].get()));
    us.push_back(static_cast<double>(ms) * 1e3);
  }
  return core::Median(std::move(us));
}

}  // namespace

bool RuntimeComm::TrialApplies() const { return processes_ == world_ && world_ > 1; }

// Only a stream known not to be captured: where the query fails, events and waits are not
// ours to make.
bool RuntimeComm::InTrial(const Call& call, const Chosen& c) const {
  return config_.confirm_calls > 0 && TrialApplies() && c.cls == BufferClass::kPlain && !c.direct &&
         c.run->name != "nccl" && gpu::CaptureOf(call.stream) == gpu::Capture::kNo;
}

core::Result<RuntimeComm::Served> RuntimeComm::ServeTrial(const Call& call, const Chosen& c) {
  Trial& t = trials_[c.run];
  if (t.candidates.empty()) {
    t.candidates.push_back(c.run);
    if (c.next != nullptr) t.candidates.push_back(c.next);
    t.events.resize(t.candidates.size() + 1);
  }
  if (!t.verdict) {
    const int candidates = static_cast<int>(t.candidates.size());
    if (const std::optional<int> arm = TrialArmOf(t.calls, config_.confirm_calls, candidates))
      return TimeTrialCall(call, c, t, *arm);
    CCLTUNE_RETURN_IF_ERROR(DecideTrial(t, call));
  }
  if (t.Lost()) {
    // A choice that found no staging was never judged: its size's calls say so, not "slower".
    const bool no_staging = t.verdict->line == kStagingFull;
    if (timing_) timing_->Forwarded(no_staging ? kStagingFull : kSlowerHere);
    if (no_staging) return Served{false, kStagingFull};
    return Served{false, t.verdict->line, true};
  }
  // The runner-up where it won and this call can run it; else the size's choice.
  Chosen picked = c;
  const AppliedRun* winner = t.candidates[static_cast<std::size_t>(t.verdict->pick)];
  if (winner == c.next) picked.run = winner;
  return ServeChosen(call, picked);
}

core::Result<RuntimeComm::Served> RuntimeComm::TimeTrialCall(const Call& call, const Chosen& c,
                                                             Trial& t, int arm) {
  const bool nccl_arm = arm == static_cast<int>(t.candidates.size());
  const AppliedRun* run = nccl_arm ? nullptr : t.candidates[static_cast<std::size_t>(arm)];
  // The runner-up's turn on a call it cannot run (its count, say; alike on every rank): the
  // trial starts again without it, and the size's choice runs this call, untimed.
  if (run != nullptr && run != c.run && run != c.next) return RestartTrial(call, c, t, 0);
  const bool timed = TrialCallTimed(t.calls, static_cast<int>(t.candidates.size()));
  gpu::Event start, end;  // only a timed call makes its two
  if (timed) {
    CCLTUNE_ASSIGN_OR_RETURN(start, gpu::Event::Create());
    CCLTUNE_ASSIGN_OR_RETURN(end, gpu::Event::Create());
    CCLTUNE_CUDA_TRY(cudaEventRecord(start.get(), call.stream));
  }
  if (nccl_arm) {
    CCLTUNE_RETURN_IF_ERROR(RunNccl(call, nccl_));
  } else {
    CCLTUNE_ASSIGN_OR_RETURN(const bool enqueued,
                             RunChoice(call, *run, c.cls, c.send_off, c.recv_off, c.direct));
    // No staging for the runner-up (the same on every rank: partitions go in call order).
    if (!enqueued && arm > 0) return RestartTrial(call, c, t, 0);
    if (!enqueued && t.candidates.size() > 1) return RestartTrial(call, c, t, 1);
    if (!enqueued) {
      // No staging for the choice, nor a runner-up to try instead (or the runner-up that
      // replaced it found none either): the size runs NCCL's own, as it would untried, with
      // no exchange.
      t.verdict = TrialVerdict{-1, {}, std::string(kStagingFull)};
      if (timing_) timing_->Forwarded(kStagingFull);
      return Served{false, kStagingFull};
    }
  }
  if (timed) {
    CCLTUNE_CUDA_TRY(cudaEventRecord(end.get(), call.stream));
    std::vector<gpu::Event>& events = t.events[static_cast<std::size_t>(arm)];
    events.push_back(std::move(start));
    events.push_back(std::move(end));
  }
  ++t.calls;
  return Served{true, nccl_arm ? kTrialNccl : std::string_view(run->name)};
}

core::Result<RuntimeComm::Served> RuntimeComm::RestartTrial(const Call& call, const Chosen& c,
                                                            Trial& t, int keep) {
  const AppliedRun* kept = t.candidates[static_cast<std::size_t>(keep)];
  t.candidates.assign(1, kept);
  t.events.clear();
  t.events.resize(2);  // the one candidate's, then NCCL's own
  t.calls = 0;
  // The size's choice where it runs this call; where it found no staging, its runner-up.
  return ServeChosen(call, c);
}

core::Status RuntimeComm::DecideTrial(Trial& t, const Call& call) {
  const core::Deadline deadline = core::Clock::now() + config_.timeout;
  std::vector<double> mine;
  for (const std::vector<gpu::Event>& events : t.events) {
    CCLTUNE_ASSIGN_OR_RETURN(const double us, MedianUs(events, nccl_, deadline));
    mine.push_back(us);
  }
  CCLTUNE_ASSIGN_OR_RETURN(const std::vector<std::string> all,
                           dir_->AllGather("trial", EncodeMedians(mine), deadline));
  std::vector<std::vector<double>> medians;
  for (const std::string& text : all) {
    CCLTUNE_ASSIGN_OR_RETURN(std::vector<double> m, DecodeMedians(text, mine.size()));
    medians.push_back(std::move(m));
  }
  std::vector<std::string> names;
  for (const AppliedRun* run : t.candidates) names.push_back(run->name);
  t.verdict = JudgeTrial(names, medians, config_.confirm_calls, apply::kNoiseThresholdPercent);
  t.events.clear();
  if (rank_ == 0) {
    Note(std::string(core::OpName(call.op)) + " " + core::DtypeName(*call.dtype) + " " +
         core::FormatSize(RecordBytes(call, world_)) + ": " + t.verdict->line);
  }
  return core::Status::Ok();
}

// Every rank must time the same calls, or one waits in the exchange for a peer that never
// makes it: the setting is on only when every rank gives the same.
core::Status RuntimeComm::AgreeOnConfirm(core::Deadline deadline) {
  CCLTUNE_ASSIGN_OR_RETURN(
      const std::vector<std::string> all,
      dir_->AllGather("confirm-calls", std::to_string(config_.confirm_calls), deadline));
  for (const std::string& n : all) {
    if (n != all.front()) {
      confirm_problem_ = "CCLTUNE_CONFIRM_CALLS differs between ranks (" + all.front() + ", " + n +
                         "): no in-program trial";
      config_.confirm_calls = 0;
      return core::Status::Ok();
    }
  }
  return core::Status::Ok();
}

}  // namespace ccltune::runtime

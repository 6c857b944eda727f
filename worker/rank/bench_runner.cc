#include "worker/rank/bench_runner.h"

#include <algorithm>
#include <cmath>

#include "core/choice.h"
#include "core/log.h"

namespace ccltune::worker {
namespace {

using core::ChoiceResult;
using core::ChoiceStatus;
using core::Result;
using core::Status;
using core::StatusCode;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

nlohmann::json ParamsJson(const core::ChoiceName& name) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : name.params) j[k] = v;
  return j;
}

}  // namespace

BenchRunner::BenchRunner(Backend& backend, JobControl& control, Rendezvous& rendezvous,
                         const core::BenchmarkSpec& bench, std::vector<BenchObserver*> observers)
    : backend_(backend),
      control_(control),
      rendezvous_(rendezvous),
      bench_(bench),
      observers_(std::move(observers)) {}

Deadline BenchRunner::ChoiceDeadline() const { return DeadlineIn(bench_.choice_timeout_seconds); }

Result<std::vector<core::ResultRecord>> BenchRunner::Run(
    const std::vector<core::Problem>& problems) {
  const auto t0 = Clock::now();
  std::vector<core::ResultRecord> records;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    auto rec = RunProblem(problems[i]);
    if (!rec.ok()) {
      for (auto* o : observers_) o->OnFinished(Since(t0), false);
      return rec.status().WithContext(problems[i].Key());
    }
    records.push_back(std::move(rec).value());
    for (auto* o : observers_) o->OnProblemDone(i + 1, problems.size());
  }
  timing_.total = Since(t0);
  for (auto* o : observers_) o->OnFinished(timing_.total, true);
  return records;
}

Result<core::ResultRecord> BenchRunner::RunProblem(const core::Problem& problem) {
  core::ResultRecord rec;
  rec.op = problem.op;
  rec.dtype = problem.dtype;
  rec.redop = problem.redop;
  rec.bytes = problem.bytes;
  rec.epilogue = problem.epilogue;
  rec.world_size = backend_.world_size();
  rec.fingerprint = fingerprint_;
  for (const auto& candidate : backend_.Candidates(problem)) {
    CCLTUNE_ASSIGN_OR_RETURN(auto result, MeasureChoice(problem, candidate));
    for (auto* o : observers_) o->OnChoice(problem, result, backend_.world_size());
    rec.choices.push_back(std::move(result));
  }
  // No valid choice at all leaves the record without a winner: reported, never published.
  auto st =
      core::PickWinner(rec, core::DefaultChoice(backend_.name()), bench_.noise_threshold_percent);
  if (!st.ok()) core::LogWarn(problem.Key() + ": no winner: " + st.message());
  if (st.ok())
    for (auto* o : observers_) o->OnRecord(rec);
  return rec;
}

Result<ChoiceResult> BenchRunner::MeasureChoice(const core::Problem& problem,
                                                const ChoiceCandidate& candidate) {
  ChoiceResult result;
  result.name = candidate.name.ToString();
  result.params = ParamsJson(candidate.name);
  if (!candidate.applicable()) {
    result.status = ChoiceStatus::kSkipped;
    result.reason = candidate.skip_reason;
    return result;
  }
  note_scope_ = problem.Key() + "/" + result.name + "/" + std::to_string(epoch_);
  auto measured = Measure(problem, candidate.name);
  if (measured.ok()) {
    measured->name = result.name;
    measured->params = result.params;
    return measured;
  }
  const Status& why = measured.status();
  CCLTUNE_RETURN_IF_ERROR(control_.Fatal());
  if (why.code() == StatusCode::kPeerLost) return why;
  if (why.code() == StatusCode::kTimeout || why.code() == StatusCode::kAborted)
    return HandleTimeout(why, std::move(result));
  result.status = why.code() == StatusCode::kFailedPrecondition ? ChoiceStatus::kSkipped
                                                                : ChoiceStatus::kFailed;
  result.reason = why.message();
  return result;
}

// One choice on one problem: prepare → agree → warm-up → timed rounds → verify → MAX.
Result<ChoiceResult> BenchRunner::Measure(const core::Problem& problem,
                                          const core::ChoiceName& choice) {
  const Deadline deadline = ChoiceDeadline();
  auto t0 = Clock::now();
  auto prepared = backend_.Prepare(problem, choice, bench_);
  if (!prepared.ok()) (void)rendezvous_.PutNote(note_scope_, prepared.status().message());
  CCLTUNE_ASSIGN_OR_RETURN(bool all_prepared, AgreeAllOk(prepared.ok(), deadline));
  if (!all_prepared) {
    if (!prepared.ok()) return prepared.status();
    auto notes = rendezvous_.Notes(note_scope_);
    return core::FailedPrecondition(notes.ok() && !notes->empty() ? notes->front()
                                                                  : "prepare failed on a peer");
  }
  CCLTUNE_RETURN_IF_ERROR((*prepared)->Warmup(bench_.warmup_iters, deadline));
  timing_.warmup_verify += Since(t0);
  CCLTUNE_ASSIGN_OR_RETURN(auto rounds, TimeRounds(**prepared, deadline));
  t0 = Clock::now();
  Status verified = (*prepared)->Verify(deadline);
  const bool wrong = verified.code() == StatusCode::kFailedPrecondition;
  if (!verified.ok() && !wrong) return verified;
  if (wrong) (void)rendezvous_.PutNote(note_scope_ + "/wrong", verified.message());
  rounds.push_back(wrong ? 1.0 : 0.0);
  CCLTUNE_ASSIGN_OR_RETURN(auto maxed, backend_.AllReduceMax(rounds, deadline));
  timing_.warmup_verify += Since(t0);
  ChoiceResult result;
  const bool any_wrong = maxed.back() > 0;
  maxed.pop_back();
  Summarize(maxed, problem, backend_.world_size(), result);
  if (any_wrong) {
    auto notes = rendezvous_.Notes(note_scope_ + "/wrong");
    result.status = ChoiceStatus::kWrong;
    result.reason = notes.ok() && !notes->empty() ? notes->front() : verified.message();
  }
  return result;
}

Result<std::vector<double>> BenchRunner::TimeRounds(PreparedChoice& prepared, Deadline deadline) {
  std::vector<double> rounds;
  for (int r = 0; r < bench_.rounds; ++r) {
    auto t0 = Clock::now();
    CCLTUNE_RETURN_IF_ERROR(backend_.Barrier(deadline));
    const double barrier = Since(t0);
    timing_.barriers += barrier;
    for (auto* o : observers_) o->OnBarrier(barrier);
    t0 = Clock::now();
    CCLTUNE_ASSIGN_OR_RETURN(double seconds, prepared.TimedRound(bench_.iters, deadline));
    timing_.timed_runs += Since(t0);
    rounds.push_back(seconds);
  }
  return rounds;
}

Result<bool> BenchRunner::AgreeAllOk(bool ok, Deadline deadline) {
  CCLTUNE_ASSIGN_OR_RETURN(auto maxed, backend_.AllReduceMax({ok ? 0.0 : 1.0}, deadline));
  return maxed.at(0) == 0.0;
}

// A choice that timed out (here or on a peer): raise the epoch's abort flag so every rank
// stops waiting, rebuild the communicator for the next epoch, record `timeout`, go on.
Result<ChoiceResult> BenchRunner::HandleTimeout(const Status& why, ChoiceResult result) {
  result.status = ChoiceStatus::kTimeout;
  result.reason = why.message();
  core::LogWarn(result.name + ": " + why.ToString() + "; aborting epoch " + std::to_string(epoch_) +
                " and rebuilding the communicator");
  (void)control_.RaiseAbort(epoch_,
                            "rank " + std::to_string(backend_.rank()) + ": " + why.message());
  ++epoch_;
  control_.SetEpoch(epoch_);
  const auto t0 = Clock::now();
  auto st = backend_.Recover(epoch_, DeadlineIn(bench_.choice_timeout_seconds + 5));
  timing_.comm_setup += Since(t0);
  if (!st.ok()) return st.WithContext("rebuilding the communicator after a timeout");
  return result;
}

void Summarize(const std::vector<double>& round_seconds, const core::Problem& problem,
               int world_size, ChoiceResult& out) {
  std::vector<double> s = round_seconds;
  std::sort(s.begin(), s.end());
  const std::size_t n = s.size();
  const double median = n == 0 ? 0 : (n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2);
  out.time_us = median * 1e6;
  out.min_us = n ? s.front() * 1e6 : 0;
  out.max_us = n ? s.back() * 1e6 : 0;
  out.status = ChoiceStatus::kOk;
  const double bytes = static_cast<double>(
      core::EffectiveBytes(problem.op, problem.dtype, problem.bytes, world_size));
  out.busbw_gbs = median > 0 ? bytes / median / 1e9 * core::BusBwFactor(problem.op, world_size) : 0;
}

}  // namespace ccltune::worker

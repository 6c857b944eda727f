#include "worker/rank/bench_runner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <set>

#include "core/apply/any_buffer.h"
#include "core/base/log.h"
#include "core/base/median.h"
#include "core/plan/choice.h"

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

// A wait that timed out only says where it stood; where the deadline was the choice's, the
// reason leads with that bound and the time the choice really ran. (A timeout before it, a
// Redis call's say, keeps its own words.)
Status ChoiceTimeout(const Status& why, double seconds, double timeout_seconds) {
  if (seconds < timeout_seconds * 0.99) return why;
  char head[128];
  std::snprintf(head, sizeof head,
                "choice timeout: still running after %.1f s, past choiceTimeoutSeconds %g s",
                seconds, timeout_seconds);
  return why.WithContext(head);
}

nlohmann::json ParamsJson(const core::ChoiceName& name) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : name.params) j[k] = v;
  return j;
}

}  // namespace

BenchRunner::BenchRunner(Backend& backend, JobControl& control, Rendezvous& rendezvous,
                         const core::BenchmarkSpec& bench, core::Search search,
                         std::vector<BenchObserver*> observers)
    : backend_(backend),
      control_(control),
      rendezvous_(rendezvous),
      bench_(bench),
      search_(search),
      observers_(std::move(observers)) {}

Deadline BenchRunner::ChoiceDeadline() const { return DeadlineIn(bench_.choice_timeout_seconds); }

Result<std::vector<core::ResultRecord>> BenchRunner::Run(
    const std::vector<core::Problem>& problems) {
  const auto t0 = Clock::now();
  std::vector<core::ResultRecord> records;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    control_.SetActivity("tuning " + problems[i].Key() + " (problem " + std::to_string(i + 1) +
                         " of " + std::to_string(problems.size()) + ")");
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
  rec.search = search_;
  const std::string default_choice = core::DefaultChoice(backend_.name());
  auto candidates = backend_.Candidates(problem);
  // The names a program's own buffers can run; in an eager tune, also may (apply::WhyNotEager).
  std::set<std::string> any_buffer;
  for (auto& c : candidates) {
    c.reach = apply::ReachOf(c.name, problem.op, backend_.name());
    if (apply::ServesOwnBuffers(c.name, problem.op, backend_.name(), !bench_.cuda_graph))
      any_buffer.insert(c.name.ToString());
  }
  const core::ScreeningPlan screening = ScreeningFor(problem);
  // Measured in MeasuringOrder, kept in catalog order (the winner rule breaks ties by it).
  rec.choices.resize(candidates.size());
  std::vector<core::Reference> references;  // verified full measurements of this problem
  std::optional<double> default_host_us;    // eager tunes: the default's cost to issue
  for (std::size_t i : MeasuringOrder(problem, candidates)) {
    // The default is never dropped; it runs short screening rounds only to be judged by them.
    const bool is_default = candidates[i].name.ToString() == default_choice;
    const bool screen = screening.rounds > 0 && (screening.short_rounds || !is_default);
    double reference_us = 0;
    CCLTUNE_ASSIGN_OR_RETURN(auto result,
                             MeasureChoice(problem, candidates[i], screen ? &screening : nullptr,
                                           references, reference_us));
    if (result.status == ChoiceStatus::kOk) {
      if (is_default) default_host_us = result.host_us;
      // One that a program's own buffers may not run judges at most the registered.
      const core::BufferReach reach =
          any_buffer.contains(candidates[i].name.ToString())
              ? core::ReachAsReference(candidates[i].reach, result.host_us, default_host_us,
                                       bench_.noise_threshold_percent)
              : std::min(candidates[i].reach, core::BufferReach::kRegistered);
      references.push_back({result.name, reference_us, reach});
    }
    for (auto* o : observers_) o->OnChoice(problem, result, backend_.world_size());
    rec.choices[i] = std::move(result);
  }
  // No valid choice at all leaves the record without a winner: reported, never published.
  auto st = core::PickWinner(rec, default_choice, bench_.noise_threshold_percent);
  core::PickAnyBuffer(rec, default_choice, bench_.noise_threshold_percent,
                      [&](const std::string& name) { return any_buffer.contains(name); });
  if (search_ == core::Search::kAdaptive) memory_.Learn(rec);  // with the default's time
  if (!st.ok()) core::LogWarn(problem.Key() + ": no winner: " + st.message());
  if (st.ok())
    for (auto* o : observers_) o->OnRecord(rec);
  return rec;
}

// Exhaustive: no screening. Adaptive: short rounds where the group's ops are known to be long.
core::ScreeningPlan BenchRunner::ScreeningFor(const core::Problem& problem) const {
  if (search_ != core::Search::kAdaptive) return {};
  return core::PlanScreening(bench_.rounds, bench_.iters, memory_.DefaultOpUs(problem));
}

// Exhaustive: catalog order, as always. Adaptive: the default first, then by the ranking at
// the nearest size already tuned, so the likely winner becomes the reference early.
std::vector<std::size_t> BenchRunner::MeasuringOrder(
    const core::Problem& problem, const std::vector<ChoiceCandidate>& candidates) const {
  std::vector<std::string> names;
  for (const auto& c : candidates) names.push_back(c.name.ToString());
  if (search_ == core::Search::kAdaptive)
    return memory_.Order(problem, names, core::DefaultChoice(backend_.name()));
  std::vector<std::size_t> order(names.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  return order;
}

Result<ChoiceResult> BenchRunner::MeasureChoice(const core::Problem& problem,
                                                const ChoiceCandidate& candidate,
                                                const core::ScreeningPlan* screen,
                                                const std::vector<core::Reference>& references,
                                                double& reference_us) {
  ChoiceResult result;
  result.name = candidate.name.ToString();
  result.params = ParamsJson(candidate.name);
  const std::string* known =
      search_ == core::Search::kAdaptive ? memory_.KnownSkip(problem, result.name) : nullptr;
  if (!candidate.applicable() || known != nullptr) {
    result.status = ChoiceStatus::kSkipped;
    result.reason = known != nullptr ? *known : candidate.skip_reason;
    return result;
  }
  // Measured by processes of its own: every rank takes the same agreed figure.
  if (settings_ != nullptr) {
    if (std::optional<ChoiceResult> own = settings_->Find(problem, candidate.name)) {
      own->name = result.name;
      own->params = result.params;
      if (own->status == ChoiceStatus::kOk) reference_us = own->max_us;
      return *own;
    }
  }
  note_scope_ = problem.Key() + "/" + result.name + "/" + std::to_string(epoch_);
  const auto started = Clock::now();
  auto measured = Measure(problem, candidate, screen, references, reference_us);
  if (measured.ok()) {
    measured->name = result.name;
    measured->params = result.params;
    return measured;
  }
  const Status& why = measured.status();
  CCLTUNE_RETURN_IF_ERROR(control_.Fatal());
  if (why.code() == StatusCode::kPeerLost) return why;
  if (why.code() == StatusCode::kTimeout)
    return HandleTimeout(ChoiceTimeout(why, Since(started), bench_.choice_timeout_seconds),
                         std::move(result));
  if (why.code() == StatusCode::kAborted) return HandleTimeout(why, std::move(result));
  // Unsupported comes only from the ranks' agreement in PrepareEverywhere, so every rank
  // remembers it alike.
  if (why.code() == StatusCode::kUnsupported && search_ == core::Search::kAdaptive)
    memory_.RememberSkip(problem, result.name, why.message());
  const bool skipped =
      why.code() == StatusCode::kFailedPrecondition || why.code() == StatusCode::kUnsupported;
  result.status = skipped ? ChoiceStatus::kSkipped : ChoiceStatus::kFailed;
  result.reason = why.message();
  return result;
}

// One choice on one problem: prepare → agree → warm-up → [screening rounds → MAX → judge]
// → timed rounds → verify → MAX. Full-length screening rounds are the first rounds of the
// full set, so a choice that survives them is measured exactly as in the exhaustive search;
// after short ones it runs the full set, on the same buffers.
Result<ChoiceResult> BenchRunner::Measure(const core::Problem& problem,
                                          const ChoiceCandidate& candidate,
                                          const core::ScreeningPlan* screen,
                                          const std::vector<core::Reference>& references,
                                          double& reference_us) {
  const Deadline deadline = ChoiceDeadline();
  auto t0 = Clock::now();
  // Full-length screening without a reference could drop nothing: it would only cost a
  // reduction. Short screening also makes the choice a reference by its short rounds.
  const bool screening = screen != nullptr && (screen->short_rounds || !references.empty());
  const bool short_rounds = screening && screen->short_rounds;
  const int first_iters = short_rounds ? screen->iters : bench_.iters;
  CCLTUNE_ASSIGN_OR_RETURN(auto prepared,
                           PrepareEverywhere(problem, candidate.name, first_iters, deadline));
  std::vector<double> rounds;
  double screened_us = 0;
  if (screening) {
    CCLTUNE_ASSIGN_OR_RETURN(auto verdict, Screen(*prepared, *screen, references, candidate.reach,
                                                  deadline, rounds, screened_us));
    timing_.screening += Since(t0);
    ++timing_.screened;
    t0 = Clock::now();
    if (verdict.drop) {
      ++timing_.pruned;
      ChoiceResult pruned;
      pruned.status = ChoiceStatus::kPruned;
      pruned.reason = std::move(verdict.reason);
      return pruned;
    }
    if (short_rounds) {
      rounds.clear();  // a measurement of their own: the full set follows
      CCLTUNE_RETURN_IF_ERROR(ReadyRounds(*prepared, bench_.iters, deadline));
    }
  }
  const int rest = bench_.rounds - static_cast<int>(rounds.size());
  CCLTUNE_RETURN_IF_ERROR(TimeRounds(*prepared, rest, bench_.iters, deadline, rounds));
  std::vector<double> host_rounds;
  if (candidate.reach == core::BufferReach::kAny && !bench_.cuda_graph) {
    CCLTUNE_RETURN_IF_ERROR(HostRounds(*prepared, deadline, host_rounds));
  }
  auto result =
      VerifyAndReduce(*prepared, std::move(rounds), std::move(host_rounds), problem, deadline);
  timing_.full += Since(t0);
  if (result.ok()) reference_us = short_rounds ? screened_us : result->max_us;
  return result;
}

// Prepare on every rank, then agree: 0 every rank prepared, 1 some rank cannot run it at this
// size (skipped), 2 some rank cannot run it at any size (Unsupported: not retried). Then the
// warm-up, and the first rounds (`round_iters` each) readied.
Result<std::unique_ptr<PreparedChoice>> BenchRunner::PrepareEverywhere(
    const core::Problem& problem, const core::ChoiceName& choice, int round_iters,
    Deadline deadline) {
  const auto t0 = Clock::now();
  auto prepared = backend_.Prepare(problem, choice, bench_);
  int code = 0;
  if (!prepared.ok()) {
    (void)rendezvous_.PutNote(note_scope_, prepared.status().message());
    code = prepared.status().code() == StatusCode::kUnsupported ? 2 : 1;
  }
  CCLTUNE_ASSIGN_OR_RETURN(const int agreed, AgreeWorst(code, deadline));
  timing_.prepare += Since(t0);
  if (agreed != 0) {
    Status why = prepared.status();
    if (prepared.ok()) {
      auto notes = rendezvous_.Notes(note_scope_);
      why = core::FailedPrecondition(notes.ok() && !notes->empty() ? notes->front()
                                                                   : "prepare failed on a peer");
    }
    return agreed == 2 ? core::Unsupported(why.message()) : why;
  }
  const auto t1 = Clock::now();
  CCLTUNE_RETURN_IF_ERROR((*prepared)->Warmup(bench_.warmup_iters, deadline));
  timing_.warmup += Since(t1);
  CCLTUNE_RETURN_IF_ERROR(ReadyRounds(**prepared, round_iters, deadline));
  return std::move(prepared).value();
}

Status BenchRunner::ReadyRounds(PreparedChoice& prepared, int iters, Deadline deadline) {
  const auto t0 = Clock::now();
  Status st = prepared.ReadyRounds(iters, deadline);
  timing_.warmup += Since(t0);
  return st;
}

// The screening rounds, reduced to their maxima across ranks now: every rank then judges the
// same numbers against the same references and takes the same decision.
Result<core::ScreeningVerdict> BenchRunner::Screen(PreparedChoice& prepared,
                                                   const core::ScreeningPlan& plan,
                                                   const std::vector<core::Reference>& references,
                                                   core::BufferReach reach, Deadline deadline,
                                                   std::vector<double>& rounds,
                                                   double& slowest_us) {
  CCLTUNE_RETURN_IF_ERROR(TimeRounds(prepared, plan.rounds, plan.iters, deadline, rounds));
  CCLTUNE_ASSIGN_OR_RETURN(auto maxed, backend_.AllReduceMax(rounds, deadline));
  for (double& s : maxed) s *= 1e6;
  slowest_us = *std::max_element(maxed.begin(), maxed.end());
  auto verdict = core::JudgeScreening(maxed, references, bench_.noise_threshold_percent, reach);
  if (verdict.drop && plan.short_rounds)
    verdict.reason += " (rounds of " + std::to_string(plan.iters) + " iterations)";
  return verdict;
}

// Correctness on fresh data, then every round's time and the wrong flag reduced with MAX.
Result<ChoiceResult> BenchRunner::VerifyAndReduce(PreparedChoice& prepared,
                                                  std::vector<double> rounds,
                                                  std::vector<double> host_rounds,
                                                  const core::Problem& problem, Deadline deadline) {
  const auto t0 = Clock::now();
  Status verified = prepared.Verify(deadline);
  const bool wrong = verified.code() == StatusCode::kFailedPrecondition;
  if (!verified.ok() && !wrong) return verified;
  if (wrong) (void)rendezvous_.PutNote(note_scope_ + "/wrong", verified.message());
  const std::size_t timed = rounds.size();
  rounds.insert(rounds.end(), host_rounds.begin(), host_rounds.end());
  rounds.push_back(wrong ? 1.0 : 0.0);
  CCLTUNE_ASSIGN_OR_RETURN(auto maxed, backend_.AllReduceMax(rounds, deadline));
  timing_.verify += Since(t0);
  ChoiceResult result;
  const bool any_wrong = maxed.back() > 0;
  maxed.pop_back();
  const std::vector<double> host_maxed(maxed.begin() + static_cast<std::ptrdiff_t>(timed),
                                       maxed.end());
  maxed.resize(timed);
  Summarize(maxed, problem, backend_.world_size(), result);
  result.host_us = HostMedianUs(host_maxed);
  if (any_wrong) {
    auto notes = rendezvous_.Notes(note_scope_ + "/wrong");
    result.status = ChoiceStatus::kWrong;
    result.reason = notes.ok() && !notes->empty() ? notes->front() : verified.message();
  }
  return result;
}

Status BenchRunner::TimeRounds(PreparedChoice& prepared, int count, int iters, Deadline deadline,
                               std::vector<double>& rounds) {
  for (int r = 0; r < count; ++r) {
    auto t0 = Clock::now();
    CCLTUNE_RETURN_IF_ERROR(backend_.Barrier(deadline));
    const double barrier = Since(t0);
    timing_.barriers += barrier;
    for (auto* o : observers_) o->OnBarrier(barrier);
    t0 = Clock::now();
    CCLTUNE_ASSIGN_OR_RETURN(double seconds, prepared.TimedRound(iters, deadline));
    timing_.timed_runs += Since(t0);
    rounds.push_back(seconds);
  }
  return Status::Ok();
}

// Unmeasured rounds (a backend that does not measure the host) travel as infinity, so that
// every rank reduces the same number of values and one rank's gap voids the figure.
Status BenchRunner::HostRounds(PreparedChoice& prepared, Deadline deadline,
                               std::vector<double>& host_rounds) {
  const auto t0 = Clock::now();
  for (int r = 0; r < kHostRounds; ++r) {
    CCLTUNE_ASSIGN_OR_RETURN(const std::optional<double> seconds,
                             prepared.HostRound(bench_.iters, deadline));
    host_rounds.push_back(seconds ? *seconds : std::numeric_limits<double>::infinity());
  }
  timing_.timed_runs += Since(t0);
  return Status::Ok();
}

Result<int> BenchRunner::AgreeWorst(int code, Deadline deadline) {
  CCLTUNE_ASSIGN_OR_RETURN(auto maxed,
                           backend_.AllReduceMax({static_cast<double>(code)}, deadline));
  return static_cast<int>(maxed.at(0));
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

std::optional<double> HostMedianUs(const std::vector<double>& round_seconds) {
  if (round_seconds.empty()) return std::nullopt;
  for (double s : round_seconds)
    if (!std::isfinite(s) || s <= 0) return std::nullopt;
  return core::Median(round_seconds) * 1e6;
}

void Summarize(const std::vector<double>& round_seconds, const core::Problem& problem,
               int world_size, ChoiceResult& out) {
  std::vector<double> s = round_seconds;
  std::sort(s.begin(), s.end());
  const std::size_t n = s.size();
  const double median = core::Median(s);
  out.time_us = median * 1e6;
  out.min_us = n ? s.front() * 1e6 : 0;
  out.max_us = n ? s.back() * 1e6 : 0;
  out.status = ChoiceStatus::kOk;
  const double bytes = static_cast<double>(
      core::EffectiveBytes(problem.op, problem.dtype, problem.bytes, world_size));
  out.busbw_gbs = median > 0 ? bytes / median / 1e9 * core::BusBwFactor(problem.op, world_size) : 0;
}

}  // namespace ccltune::worker

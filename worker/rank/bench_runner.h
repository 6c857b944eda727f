// The measurement protocol of docs/design.md §2, shared by every backend and choice: for each
// problem and choice, warm-up, `rounds` barrier-started timed rounds, MAX across ranks,
// median/min/max, correctness check, then the winner rule. Timeouts abort the choice on
// every rank (epoch bump + backend Recover) and tuning goes on; a lost peer ends it.
// The adaptive search (core/search/screening.h) screens the choices: a few rounds each, judged
// against the verified full measurements so far, and only a choice that can still win runs its full
// rounds and the correctness check; a choice that runs on any buffer or on registered ones
// (core/apply/any_buffer.h's reach) is judged only against choices that reach as far, so the
// fastest of each reach is measured in full: the any-buffer one is recorded beside the winner,
// the registered one is in the choices for the runtime's direct mode. Where ops are long the
// screening rounds are short ones that every choice (the default too) runs first; else they are the
// first full rounds.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "core/plan/plan.h"
#include "core/plan/problem.h"
#include "core/results/result.h"
#include "core/search/screening.h"
#include "core/search/search_memory.h"
#include "worker/rank/backend.h"
#include "worker/rank/bench_observer.h"
#include "worker/rank/process_settings.h"
#include "worker/rendezvous/job_control.h"
#include "worker/rendezvous/rendezvous.h"

namespace ccltune::worker {

// Where the time of a tuning run went (seconds, this rank).
struct TimingBreakdown {
  double comm_setup = 0;  // backend creation + recoveries
  double presync = 0;
  double barriers = 0;
  double timed_runs = 0;  // inside timed rounds
  double prepare = 0;     // buffers, registration, probes, the ranks' agreement on them
  double warmup = 0;      // warm-up iterations and readying rounds (graph capture)
  double verify = 0;      // the correctness check and the reduction of the rounds
  // The same time split by search phase: screening phases (preparation, warm-up, screening
  // rounds, the decision) and full measurements (the rounds after screening and the check,
  // or a whole measurement that was not screened).
  double screening = 0;
  double full = 0;
  int screened = 0;  // choices screened, and of those, dropped
  int pruned = 0;
  double total = 0;
};

class BenchRunner {
 public:
  BenchRunner(Backend& backend, JobControl& control, Rendezvous& rendezvous,
              const core::BenchmarkSpec& bench, core::Search search,
              std::vector<BenchObserver*> observers);

  // Every problem in order. Error only when the attempt cannot go on (lost peer, failure).
  core::Result<std::vector<core::ResultRecord>> Run(const std::vector<core::Problem>& problems);

  const TimingBreakdown& timing() const { return timing_; }
  // Stamped on every record before observers see it (metrics label results by it).
  void set_fingerprint(std::string fp) { fingerprint_ = std::move(fp); }
  // The figures of process settings (process_settings.h), taken instead of a measurement
  // here; must outlive Run.
  void set_process_settings(const SettingResults* settings) { settings_ = settings; }

 private:
  // Eager host rounds per choice: a median of 5 settles the host's noise at little cost.
  static constexpr int kHostRounds = 5;
  core::Result<core::ResultRecord> RunProblem(const core::Problem& problem);
  std::vector<std::size_t> MeasuringOrder(const core::Problem& problem,
                                          const std::vector<ChoiceCandidate>& candidates) const;
  core::ScreeningPlan ScreeningFor(const core::Problem& problem) const;
  // `screen` null: measured in full; else screened first. `reference_us` gets what the
  // choice is a reference by, if it turns out ok: its slowest round of the screening length.
  core::Result<core::ChoiceResult> MeasureChoice(const core::Problem& problem,
                                                 const ChoiceCandidate& candidate,
                                                 const core::ScreeningPlan* screen,
                                                 const std::vector<core::Reference>& references,
                                                 double& reference_us);
  core::Result<core::ChoiceResult> Measure(const core::Problem& problem,
                                           const ChoiceCandidate& candidate,
                                           const core::ScreeningPlan* screen,
                                           const std::vector<core::Reference>& references,
                                           double& reference_us);
  core::Result<std::unique_ptr<PreparedChoice>> PrepareEverywhere(const core::Problem& problem,
                                                                  const core::ChoiceName& choice,
                                                                  int round_iters,
                                                                  Deadline deadline);
  // `reach`: which buffers the choice runs on; only references that reach as far judge it.
  core::Result<core::ScreeningVerdict> Screen(PreparedChoice& prepared,
                                              const core::ScreeningPlan& plan,
                                              const std::vector<core::Reference>& references,
                                              core::BufferReach reach, Deadline deadline,
                                              std::vector<double>& rounds, double& slowest_us);
  // The eager host rounds of a choice a program's own buffers run (PreparedChoice::HostRound).
  core::Status HostRounds(PreparedChoice& prepared, Deadline deadline,
                          std::vector<double>& host_rounds);
  core::Result<core::ChoiceResult> VerifyAndReduce(PreparedChoice& prepared,
                                                   std::vector<double> rounds,
                                                   std::vector<double> host_rounds,
                                                   const core::Problem& problem, Deadline deadline);
  core::Status ReadyRounds(PreparedChoice& prepared, int iters, Deadline deadline);
  core::Status TimeRounds(PreparedChoice& prepared, int count, int iters, Deadline deadline,
                          std::vector<double>& rounds);
  core::Result<int> AgreeWorst(int code, Deadline deadline);
  core::Result<core::ChoiceResult> HandleTimeout(const core::Status& why,
                                                 core::ChoiceResult result);
  Deadline ChoiceDeadline() const;

  Backend& backend_;
  JobControl& control_;
  Rendezvous& rendezvous_;
  core::BenchmarkSpec bench_;
  core::Search search_;
  core::SearchMemory memory_;  // adaptive only: what earlier sizes taught
  std::vector<BenchObserver*> observers_;
  TimingBreakdown timing_;
  int epoch_ = 0;
  std::string fingerprint_;
  std::string note_scope_;  // problem+choice id for notes between ranks
  const SettingResults* settings_ = nullptr;
};

// The median host time per op (µs) of rounds already maxed across ranks (seconds); none
// when there are no rounds or any is unmeasured (infinite).
std::optional<double> HostMedianUs(const std::vector<double>& round_seconds);

// Median / min / max of per-round times (seconds) into a ChoiceResult (µs) with busbw.
void Summarize(const std::vector<double>& round_seconds, const core::Problem& problem,
               int world_size, core::ChoiceResult& out);

}  // namespace ccltune::worker

// The measurement protocol of DESIGN §2, shared by every backend and choice: for each
// problem and choice, warm-up, `rounds` barrier-started timed rounds, MAX across ranks,
// median/min/max, correctness check, then the winner rule. Timeouts abort the choice on
// every rank (epoch bump + backend Recover) and tuning goes on; a lost peer ends it.
#pragma once

#include <vector>

#include "core/plan.h"
#include "core/problem.h"
#include "core/result.h"
#include "worker/rank/backend.h"
#include "worker/rank/bench_observer.h"
#include "worker/rendezvous/job_control.h"
#include "worker/rendezvous/rendezvous.h"

namespace ccltune::worker {

// Where the time of a tuning run went (seconds, this rank).
struct TimingBreakdown {
  double comm_setup = 0;  // backend creation + recoveries
  double presync = 0;
  double barriers = 0;
  double timed_runs = 0;  // inside timed rounds
  double warmup_verify = 0;
  double total = 0;
};

class BenchRunner {
 public:
  BenchRunner(Backend& backend, JobControl& control, Rendezvous& rendezvous,
              const core::BenchmarkSpec& bench, std::vector<BenchObserver*> observers);

  // Every problem in order. Error only when the attempt cannot go on (lost peer, failure).
  core::Result<std::vector<core::ResultRecord>> Run(const std::vector<core::Problem>& problems);

  const TimingBreakdown& timing() const { return timing_; }
  // Stamped on every record before observers see it (metrics label results by it).
  void set_fingerprint(std::string fp) { fingerprint_ = std::move(fp); }

 private:
  core::Result<core::ResultRecord> RunProblem(const core::Problem& problem);
  core::Result<core::ChoiceResult> MeasureChoice(const core::Problem& problem,
                                                 const ChoiceCandidate& candidate);
  core::Result<core::ChoiceResult> Measure(const core::Problem& problem,
                                           const core::ChoiceName& choice);
  core::Result<std::vector<double>> TimeRounds(PreparedChoice& prepared, Deadline deadline);
  core::Result<bool> AgreeAllOk(bool ok, Deadline deadline);
  core::Result<core::ChoiceResult> HandleTimeout(const core::Status& why,
                                                 core::ChoiceResult result);
  Deadline ChoiceDeadline() const;

  Backend& backend_;
  JobControl& control_;
  Rendezvous& rendezvous_;
  core::BenchmarkSpec bench_;
  std::vector<BenchObserver*> observers_;
  TimingBreakdown timing_;
  int epoch_ = 0;
  std::string fingerprint_;
  std::string note_scope_;  // problem+choice id for notes between ranks
};

// Median / min / max of per-round times (seconds) into a ChoiceResult (µs) with busbw.
void Summarize(const std::vector<double>& round_seconds, const core::Problem& problem,
               int world_size, core::ChoiceResult& out);

}  // namespace ccltune::worker

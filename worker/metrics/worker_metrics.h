// WorkerMetrics: the docs/design.md §7 worker metric families, fed by the events of a tuning run.
// It only writes into a core::Registry; serving (MetricsExposer) and pushing (PushMetrics)
// read that registry and know nothing about these families.
//
// Families (defined once, in Create()):
//   ccltune_presync_wait_seconds             histogram  own wait in the pre-sync window
//   ccltune_presync_skew_seconds             gauge      last − first arrival (Redis TIME)
//   ccltune_presync_timeouts_total           counter
//   ccltune_barrier_seconds                  histogram  1 µs … ~1 s, ×2 steps
//   ccltune_choice_time_seconds{op,dtype,bytes,epilogue,choice}            gauge  median of max
//   ccltune_choice_busbw_bytes_per_second{op,dtype,bytes,epilogue,choice}  gauge  busbw
//   ccltune_winner_info{op,dtype,bytes,epilogue,choice}                    gauge  = 1
//   ccltune_speedup_vs_default{op,dtype,bytes,epilogue}                    gauge  default/winner
//   (epilogue = core::Epilogue::Label(): "none", or "residualRmsNorm,hidden=4096" for a fused
//   all-reduce + epilogue problem, whose bytes are tokens x hidden x dtype size)
//   ccltune_choice_failures_total{choice,reason}  counter, reason = wrong|timeout|failed|skipped
//   ccltune_tuning_duration_seconds          gauge      elapsed so far; final at the end
// Every sample also carries the const labels `ccltune_job`, `rank` and, once known,
// `fingerprint`, so a scrape and a Pushgateway push of the same rank can be told apart from
// other ranks and de-duplicated (`max by (ccltune_job, rank, …)`).
//
// Cardinality: the labelled families are bounded by the plan (ops × dtypes × sizes × choices;
// e.g. 1 × 2 × 17 × 15 = 510) and capped at Options::max_label_sets (default 4096) per family;
// label sets past the cap are counted in ccltune_metrics_label_sets_dropped_total{family}.
//
// Thread-safety: the BenchObserver methods are called on the rank's main thread; they only
// touch thread-safe registry children, so a server thread may collect at any time. Never
// blocks. Ownership: `registry` must outlive this object.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/metrics/metrics.h"
#include "worker/rank/bench_observer.h"

namespace ccltune::worker {

class WorkerMetrics final : public BenchObserver {
 public:
  struct Options {
    std::string job_id;  // value of const label `ccltune_job` (CR uid or local uuid)
    int rank = 0;        // value of const label `rank`
    std::size_t max_label_sets = core::kDefaultMaxLabelSets;
  };

  // Registers the families and const labels. Fails (InvalidArgument/FailedPrecondition) if
  // `registry` already holds one of these families.
  static core::Result<std::unique_ptr<WorkerMetrics>> Create(core::Registry& registry,
                                                             const Options& options);

  // The environment fingerprint (docs/design.md §4), once rendezvous has computed it. Also taken
  // from the first ResultRecord that carries one. Main thread, like the events.
  void SetFingerprint(const std::string& fingerprint);

  void OnPreSync(double wait_seconds, double skew_seconds) override;
  void OnPreSyncTimeout() override;
  void OnBarrier(double seconds) override;
  void OnChoice(const core::Problem& problem, const core::ChoiceResult& result,
                int world_size) override;
  void OnRecord(const core::ResultRecord& record) override;
  void OnProblemDone(std::size_t index, std::size_t total) override;
  void OnFinished(double tuning_seconds, bool ok) override;

 private:
  struct Families {
    core::Family<core::Histogram>* presync_wait = nullptr;
    core::Family<core::Gauge>* presync_skew = nullptr;
    core::Family<core::Counter>* presync_timeouts = nullptr;
    core::Family<core::Histogram>* barrier = nullptr;
    core::Family<core::Gauge>* choice_time = nullptr;
    core::Family<core::Gauge>* choice_busbw = nullptr;
    core::Family<core::Gauge>* winner_info = nullptr;
    core::Family<core::Gauge>* speedup = nullptr;
    core::Family<core::Counter>* choice_failures = nullptr;
    core::Family<core::Gauge>* tuning_duration = nullptr;
  };
  WorkerMetrics(core::Registry& registry, const Families& families);
  static core::Status Register(core::Registry& registry, const Options& options,
                               Families& families);

  core::Registry& registry_;
  Families f_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  bool fingerprint_set_ = false;
  // (op, dtype, bytes, epilogue) label values → current winner, so a replaced winner stops
  // exporting.
  std::map<std::vector<std::string>, std::string> winners_;
};

// Bucket layouts, public so that tests and dashboards agree with the code.
std::vector<double> PreSyncWaitBuckets();  // 1 ms … ~65 s
std::vector<double> BarrierBuckets();      // 1 µs … ~1 s

}  // namespace ccltune::worker

#include "worker/metrics/worker_metrics.h"

#include <cmath>

#include "core/plan/types.h"

namespace ccltune::worker {
namespace {

// op, dtype, bytes, epilogue ("none" or "residualRmsNorm,hidden=4096": a fused problem of
// the same bytes is another series, never a second value of the plain one).
std::vector<std::string> ProblemLabels(core::Op op, core::Dtype dtype, std::uint64_t bytes,
                                       const core::Epilogue& epilogue) {
  return {core::OpName(op), core::DtypeName(dtype), std::to_string(bytes), epilogue.Label()};
}

std::vector<std::string> ChoiceLabels(const core::Problem& p, const std::string& choice) {
  auto labels = ProblemLabels(p.op, p.dtype, p.bytes, p.epilogue);
  labels.push_back(choice);
  return labels;
}

// The result's busbw when the runner filled it, else nccl-tests' formula from the time.
double BusBwBytesPerSecond(const core::Problem& p, const core::ChoiceResult& r, int world_size) {
  if (r.busbw_gbs > 0) return r.busbw_gbs * 1e9;
  if (!(r.time_us > 0) || !std::isfinite(r.time_us)) return 0;
  double algbw = static_cast<double>(p.bytes) / (r.time_us * 1e-6);
  return algbw * core::BusBwFactor(p.op, world_size);
}

template <class T>
core::Status Take(core::Result<core::Family<T>*> added, core::Family<T>*& out) {
  if (!added.ok()) return added.status();
  out = *added;
  return core::Status::Ok();
}

}  // namespace

std::vector<double> PreSyncWaitBuckets() { return core::ExponentialBuckets(0.001, 2, 17); }
std::vector<double> BarrierBuckets() { return core::ExponentialBuckets(1e-6, 2, 21); }

core::Status WorkerMetrics::Register(core::Registry& r, const Options& o, Families& f) {
  const std::vector<std::string> problem{"op", "dtype", "bytes", "epilogue"};
  const std::vector<std::string> choice{"op", "dtype", "bytes", "epilogue", "choice"};
  const std::size_t cap = o.max_label_sets;
  CCLTUNE_RETURN_IF_ERROR(
      Take(r.AddHistogram({"ccltune_presync_wait_seconds",
                           "Time this rank waited in the pre-sync window for all ranks to arrive.",
                           {},
                           cap,
                           PreSyncWaitBuckets()}),
           f.presync_wait));
  CCLTUNE_RETURN_IF_ERROR(
      Take(r.AddGauge({"ccltune_presync_skew_seconds",
                       "Last minus first rank arrival in the pre-sync window (Redis TIME).",
                       {},
                       cap,
                       {}}),
           f.presync_skew));
  CCLTUNE_RETURN_IF_ERROR(
      Take(r.AddCounter({"ccltune_presync_timeouts_total",
                         "Pre-sync windows that expired before every rank arrived.",
                         {},
                         cap,
                         {}}),
           f.presync_timeouts));
  CCLTUNE_RETURN_IF_ERROR(
      Take(r.AddHistogram({"ccltune_barrier_seconds",
                           "Cost of the communicator barrier before each benchmark round.",
                           {},
                           cap,
                           BarrierBuckets()}),
           f.barrier));
  CCLTUNE_RETURN_IF_ERROR(
      Take(r.AddGauge({"ccltune_choice_time_seconds",
                       "Time per op of a choice: median over rounds of the max across ranks.",
                       choice,
                       cap,
                       {}}),
           f.choice_time));
  CCLTUNE_RETURN_IF_ERROR(Take(r.AddGauge({"ccltune_choice_busbw_bytes_per_second",
                                           "Bus bandwidth of a choice as nccl-tests defines it.",
                                           choice,
                                           cap,
                                           {}}),
                               f.choice_busbw));
  CCLTUNE_RETURN_IF_ERROR(Take(r.AddGauge({"ccltune_winner_info",
                                           "The winning choice of a problem (value is always 1).",
                                           choice,
                                           cap,
                                           {}}),
                               f.winner_info));
  CCLTUNE_RETURN_IF_ERROR(
      Take(r.AddGauge({"ccltune_speedup_vs_default",
                       "Default choice time divided by winner time (1 = the default won).",
                       problem,
                       cap,
                       {}}),
           f.speedup));
  CCLTUNE_RETURN_IF_ERROR(
      Take(r.AddCounter({"ccltune_choice_failures_total",
                         "Choices that did not produce a valid time, by choice and reason.",
                         {"choice", "reason"},
                         cap,
                         {}}),
           f.choice_failures));
  return Take(r.AddGauge({"ccltune_tuning_duration_seconds",
                          "Seconds spent tuning so far; the total once tuning finished.",
                          {},
                          cap,
                          {}}),
              f.tuning_duration);
}

core::Result<std::unique_ptr<WorkerMetrics>> WorkerMetrics::Create(core::Registry& registry,
                                                                   const Options& options) {
  CCLTUNE_RETURN_IF_ERROR(registry.SetConstLabel("ccltune_job", options.job_id));
  CCLTUNE_RETURN_IF_ERROR(registry.SetConstLabel("rank", std::to_string(options.rank)));
  Families families;
  CCLTUNE_RETURN_IF_ERROR(Register(registry, options, families).WithContext("worker metrics"));
  // Unlabelled histograms and counters exist from the start (at 0) so that "no timeouts" is a
  // 0, not a missing series; gauges appear only once they mean something.
  families.presync_wait->WithLabels({});
  families.presync_timeouts->WithLabels({});
  families.barrier->WithLabels({});
  return std::unique_ptr<WorkerMetrics>(new WorkerMetrics(registry, families));
}

WorkerMetrics::WorkerMetrics(core::Registry& registry, const Families& families)
    : registry_(registry), f_(families) {}

void WorkerMetrics::SetFingerprint(const std::string& fingerprint) {
  // Cannot fail: "fingerprint" is a valid name and no family of ours uses it as a label.
  (void)registry_.SetConstLabel("fingerprint", fingerprint);
  fingerprint_set_ = !fingerprint.empty();
}

void WorkerMetrics::OnPreSync(double wait_seconds, double skew_seconds) {
  f_.presync_wait->WithLabels({}).Observe(wait_seconds);
  f_.presync_skew->WithLabels({}).Set(skew_seconds);
}

void WorkerMetrics::OnPreSyncTimeout() { f_.presync_timeouts->WithLabels({}).Increment(); }

void WorkerMetrics::OnBarrier(double seconds) { f_.barrier->WithLabels({}).Observe(seconds); }

void WorkerMetrics::OnChoice(const core::Problem& problem, const core::ChoiceResult& result,
                             int world_size) {
  // A choice the adaptive search dropped did not fail: it was slower, and has no time.
  if (result.status == core::ChoiceStatus::kPruned) return;
  if (result.status != core::ChoiceStatus::kOk) {
    f_.choice_failures->WithLabels({result.name, core::ChoiceStatusName(result.status)})
        .Increment();
    return;  // an infinite time would flatten every latency panel
  }
  auto labels = ChoiceLabels(problem, result.name);
  f_.choice_time->WithLabels(labels).Set(result.time_us * 1e-6);
  f_.choice_busbw->WithLabels(labels).Set(BusBwBytesPerSecond(problem, result, world_size));
}

void WorkerMetrics::OnRecord(const core::ResultRecord& record) {
  if (!fingerprint_set_ && !record.fingerprint.empty()) SetFingerprint(record.fingerprint);
  auto problem = ProblemLabels(record.op, record.dtype, record.bytes, record.epilogue);
  std::string& current = winners_[problem];
  if (!current.empty() && current != record.winner) {
    auto old = problem;
    old.push_back(current);
    f_.winner_info->Remove(old);  // one winner per problem, even across a re-run
  }
  current = record.winner;
  auto labels = problem;
  labels.push_back(record.winner);
  f_.winner_info->WithLabels(labels).Set(1);
  f_.speedup->WithLabels(problem).Set(record.speedup_vs_default);
}

void WorkerMetrics::OnProblemDone(std::size_t /*index*/, std::size_t /*total*/) {
  // A live value, so the dashboard shows progress of a long job before it finishes.
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - started_;
  f_.tuning_duration->WithLabels({}).Set(elapsed.count());
}

void WorkerMetrics::OnFinished(double tuning_seconds, bool /*ok*/) {
  f_.tuning_duration->WithLabels({}).Set(tuning_seconds);
}

}  // namespace ccltune::worker

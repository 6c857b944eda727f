#include "controller/metrics/metrics.h"

#include <stdexcept>

namespace ccltune::controller {
namespace {

// Family definitions are constants of the program: a failure here is a bug, found at start.
template <class T>
T* OrDie(core::Result<T*> r) {
  if (!r.ok()) throw std::logic_error("metrics: " + r.status().ToString());
  return *r;
}

}  // namespace

ControllerMetrics::ControllerMetrics() {
  jobs_ = OrDie(registry_.AddGauge(
      {"ccltune_jobs", "CollectiveTuningJobs in the informer cache by status.phase", {"phase"}}));
  reconciles_ = OrDie(registry_.AddCounter(
      {"ccltune_reconcile_total", "Reconcile calls by result (ok, requeue, error)", {"result"}}));
  reconcile_seconds_ = OrDie(registry_.AddHistogram({"ccltune_reconcile_duration_seconds",
                                                     "Time of one Reconcile call",
                                                     {},
                                                     4096,
                                                     core::ExponentialBuckets(0.001, 2, 14)}));
  job_seconds_ = OrDie(registry_.AddHistogram({"ccltune_job_duration_seconds",
                                               "startTime to completion of succeeded jobs",
                                               {},
                                               4096,
                                               core::ExponentialBuckets(1, 2, 14)}));
  presync_wait_ = OrDie(registry_.AddGauge({"ccltune_job_presync_wait_seconds",
                                            "Pre-sync wait of a job's last attempt",
                                            {"namespace", "job"}}));
  cache_entries_ = OrDie(registry_.AddGauge(
      {"ccltune_cache_entries", "Result records in the shared Redis results cache", {}}));
  informer_entries_ = OrDie(registry_.AddGauge({"ccltune_informer_cache_entries",
                                                "Objects in the controller's informer caches",
                                                {"resource"}}));
  results_requests_ = OrDie(registry_.AddCounter(
      {"ccltune_results_requests_total", "Results API requests by HTTP code", {"code"}}));
  leader_ = OrDie(registry_.AddGauge(
      {"ccltune_controller_leader", "1 while this replica holds the leader lease", {}}));
}

void ControllerMetrics::CountReconcile(const std::string& result, double seconds) {
  reconciles_->WithLabels({result}).Increment();
  reconcile_seconds_->WithLabels({}).Observe(seconds);
}

void ControllerMetrics::ObserveJobDuration(double seconds) {
  job_seconds_->WithLabels({}).Observe(seconds);
}

void ControllerMetrics::SetJobPreSyncWait(const std::string& ns, const std::string& job,
                                          double seconds) {
  presync_wait_->WithLabels({ns, job}).Set(seconds);
}

void ControllerMetrics::ForgetJob(const std::string& ns, const std::string& job) {
  presync_wait_->Remove({ns, job});
}

void ControllerMetrics::SetJobsByPhase(const std::map<std::string, int>& counts) {
  for (const char* phase : {"Pending", "Running", "Succeeded", "Failed", "Suspended"}) {
    auto it = counts.find(phase);
    jobs_->WithLabels({phase}).Set(it == counts.end() ? 0 : it->second);
  }
}

void ControllerMetrics::SetInformerEntries(const std::string& resource, double n) {
  informer_entries_->WithLabels({resource}).Set(n);
}

void ControllerMetrics::SetResultCacheEntries(double n) { cache_entries_->WithLabels({}).Set(n); }

void ControllerMetrics::CountResultsRequest(int code) {
  results_requests_->WithLabels({std::to_string(code)}).Increment();
}

void ControllerMetrics::SetLeader(bool leader) { leader_->WithLabels({}).Set(leader ? 1 : 0); }

}  // namespace ccltune::controller

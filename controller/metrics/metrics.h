// The controller's metric families (docs/design.md §7) on a core::Registry, defined once at
// startup. Thread-safe (the registry's children are). Gauges that describe the whole cluster
// (ccltune_jobs{phase}, cache sizes) are refreshed by the /metrics handler right before it
// serializes, from the informers' caches, so they cannot drift from what the caches hold.
#pragma once

#include <map>
#include <string>

#include "core/metrics/metrics.h"

namespace ccltune::controller {

class ControllerMetrics {
 public:
  ControllerMetrics();
  void CountReconcile(const std::string& result, double seconds);  // result: ok|error|requeue
  void ObserveJobDuration(double seconds);
  void SetJobPreSyncWait(const std::string& ns, const std::string& job, double seconds);
  void ForgetJob(const std::string& ns, const std::string& job);
  void SetJobsByPhase(const std::map<std::string, int>& counts);
  void SetInformerEntries(const std::string& resource, double n);
  void SetResultCacheEntries(double n);
  void CountResultsRequest(int code);
  void SetLeader(bool leader);
  std::string Text() const { return registry_.Text(); }
  const core::Registry& registry() const { return registry_; }

 private:
  core::Registry registry_;
  core::Family<core::Gauge>* jobs_;
  core::Family<core::Counter>* reconciles_;
  core::Family<core::Histogram>* reconcile_seconds_;
  core::Family<core::Histogram>* job_seconds_;
  core::Family<core::Gauge>* presync_wait_;
  core::Family<core::Gauge>* cache_entries_;
  core::Family<core::Gauge>* informer_entries_;
  core::Family<core::Counter>* results_requests_;
  core::Family<core::Gauge>* leader_;
};

}  // namespace ccltune::controller

// The tuning ranks' groups on a Pushgateway, deleted with their CollectiveTuningJob
// (docs/design.md §6): a Pushgateway keeps a group until someone deletes it, so without this a
// deleted job's series would stay in Prometheus for good. One HTTP DELETE (libcurl) per rank on
// the group the ranks push to (core/metrics/push_group.h). It also counts each job's failed
// cleanups, so that the finalizer logs a failure once and backs off between retries.
// Thread-safe: the reconcile workers share one.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "core/base/status.h"

namespace ccltune::controller {

class PushGroups {
 public:
  // `timeout` bounds each request (connection included).
  explicit PushGroups(std::chrono::milliseconds timeout = std::chrono::seconds(5));

  // Deletes the groups of ranks 0 .. ranks-1 of `job_id` on the Pushgateway at `base_url`
  // (http[s]://host[:port][/prefix], no trailing slash). Blocks for at most ranks × timeout.
  // The Pushgateway answers 202 for a group it does not hold too, so a repeat is harmless.
  // Unavailable at the first failure, naming the rank and the cause (connection, HTTP code).
  core::Status Delete(const std::string& base_url, const std::string& job_id, int ranks) const;

  // Counts one more failed cleanup of `job_id`; returns the count (1 the first time).
  int CountFailure(const std::string& job_id);
  // Drops the count once the job's cleanup is over (done or given up).
  void Forget(const std::string& job_id);

 private:
  std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::map<std::string, int> failures_;
};

}  // namespace ccltune::controller

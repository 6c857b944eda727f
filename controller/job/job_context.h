// What one Reconcile call knows about one job: a private copy of the object from the API
// server (never the informer's cache), the desired status being built by the policy steps,
// the job's pods, and the earliest time the job wants to be looked at again.
#pragma once

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "controller/job/job_spec.h"
#include "controller/kube/time_util.h"

namespace ccltune::controller {

inline constexpr const char* kFinalizer = "ccltune.io/redis-cleanup";
inline constexpr const char* kJobLabel = "ccltune.io/job";
inline constexpr const char* kAttemptLabel = "ccltune.io/attempt";
inline constexpr const char* kPodIndexLabel = "ccltune.io/pod-index";

struct JobContext {
  nlohmann::json job;                // fresh copy from the API server
  nlohmann::json status;             // desired status: written once at the end
  JobSpec spec;                      // valid once the validation step passed
  std::vector<nlohmann::json> pods;  // pods owned by this job (any attempt)
  Clock::time_point now = Clock::now();
  std::optional<std::chrono::milliseconds> requeue_after;

  std::string ns() const { return job["metadata"].value("namespace", ""); }
  std::string name() const { return job["metadata"].value("name", ""); }
  std::string uid() const { return job["metadata"].value("uid", ""); }
  long long generation() const { return job["metadata"].value("generation", 0LL); }
  int attempt() const { return status.value("attempt", 0); }
  // Keeps the earliest requested requeue.
  void RequeueAfter(std::chrono::milliseconds d) {
    d = std::max(d, std::chrono::milliseconds(0));
    requeue_after = requeue_after ? std::min(*requeue_after, d) : d;
  }
};

}  // namespace ccltune::controller

// The controller's typed view of a CollectiveTuningJob spec (docs/design.md §6), parsed and
// validated from the object's JSON. Each error names its field path ("spec.gpusPerPod: ...")
// because it becomes the message of condition Validated=False. The API server's schema may
// already reject some of these; the controller does not rely on it.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/base/status.h"
#include "core/plan/plan.h"

namespace ccltune::controller {

struct SecretKeyRef {
  std::string name, key;
};

struct JobSpec {
  int world_size = 0;
  int gpus_per_pod = 0;
  std::string backend = "nccl";
  nlohmann::json pod_template = nlohmann::json::object();  // validated spec.template
  core::Plan plan;
  std::string redis_url;                     // spec.cache.redisURL or the controller default
  std::optional<SecretKeyRef> password_ref;  // spec.cache.passwordSecretRef or the default
  bool publish = true;
  int backoff_limit = 2;
  std::optional<int> active_deadline_seconds;
  std::optional<int> ttl_seconds_after_finished;
  bool suspend = false;
  std::string pushgateway;         // spec.metrics.pushgateway or the default; empty: no push
  int metrics_linger_seconds = 0;  // spec.metrics.lingerSeconds or the default

  int pods() const { return world_size / gpus_per_pod; }
};

// What a job inherits from the controller's flags when its spec leaves it out.
struct JobDefaults {
  std::string image;                         // --worker-image
  std::string redis_url;                     // --redis-url
  std::optional<SecretKeyRef> password_ref;  // --redis-password-secret name/key
  std::string pushgateway;                   // --pushgateway-url (checked at start-up)
  int metrics_linger_seconds = 0;            // --metrics-linger
};

// Bounds of spec.metrics.lingerSeconds and --metrics-linger: the worker's --metrics-linger.
inline constexpr int kMaxMetricsLingerSeconds = 600;

core::Result<JobSpec> ParseJobSpec(const nlohmann::json& spec, const JobDefaults& defaults);

}  // namespace ccltune::controller

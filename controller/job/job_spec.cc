#include "controller/job/job_spec.h"

#include <set>

#include "controller/job/pushgateway_url.h"
#include "core/node/node_name.h"
#include "core/redis/redis_client.h"

namespace ccltune::controller {
namespace {

using Json = nlohmann::json;
using core::InvalidArgument;
using core::Result;
using core::Status;

// Reads an optional integer field within [lo, hi]; absent keeps `*out`.
Status IntField(const Json& obj, const char* key, const std::string& path, long long lo,
                long long hi, int* out) {
  if (!obj.contains(key)) return Status::Ok();
  const Json& v = obj[key];
  if (!v.is_number_integer()) return InvalidArgument(path + key + ": must be an integer");
  long long n = v.get<long long>();
  if (n < lo || n > hi) {
    return InvalidArgument(path + key + ": " + std::to_string(n) + " is outside [" +
                           std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  *out = static_cast<int>(n);
  return Status::Ok();
}

Status BoolField(const Json& obj, const char* key, const std::string& path, bool* out) {
  if (!obj.contains(key)) return Status::Ok();
  if (!obj[key].is_boolean()) return InvalidArgument(path + key + ": must be true or false");
  *out = obj[key].get<bool>();
  return Status::Ok();
}

Status OnlyKnownFields(const Json& obj, const std::set<std::string>& known,
                       const std::string& path) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (!known.count(it.key())) return InvalidArgument(path + it.key() + ": unknown field");
  }
  return Status::Ok();
}

Status CheckType(const Json& obj, const char* key, const std::string& path, Json::value_t type,
                 const char* type_name) {
  if (obj.contains(key) && obj[key].type() != type) {
    return InvalidArgument(path + key + ": must be " + type_name);
  }
  return Status::Ok();
}

Status ParseTemplate(const Json& spec, const JobDefaults& defaults, JobSpec& out) {
  const std::string p = "spec.template.";
  Json t = spec.value("template", Json::object());
  if (!t.is_object()) return InvalidArgument("spec.template: must be an object");
  CCLTUNE_RETURN_IF_ERROR(
      OnlyKnownFields(t,
                      {"image", "imagePullPolicy", "resources", "nodeSelector", "tolerations",
                       "affinity", "schedulerName", "priorityClassName", "hostIPC"},
                      p));
  for (const char* k : {"image", "imagePullPolicy", "schedulerName", "priorityClassName"}) {
    CCLTUNE_RETURN_IF_ERROR(CheckType(t, k, p, Json::value_t::string, "a string"));
  }
  for (const char* k : {"resources", "nodeSelector", "affinity"}) {
    CCLTUNE_RETURN_IF_ERROR(CheckType(t, k, p, Json::value_t::object, "an object"));
  }
  CCLTUNE_RETURN_IF_ERROR(CheckType(t, "tolerations", p, Json::value_t::array, "a list"));
  CCLTUNE_RETURN_IF_ERROR(CheckType(t, "hostIPC", p, Json::value_t::boolean, "true or false"));
  const Json selector = t.value("nodeSelector", Json::object());
  for (auto& [k, v] : selector.items()) {
    if (!v.is_string()) return InvalidArgument(p + "nodeSelector." + k + ": must be a string");
  }
  std::string pull = t.value("imagePullPolicy", "IfNotPresent");
  if (pull != "Always" && pull != "IfNotPresent" && pull != "Never") {
    return InvalidArgument(p + "imagePullPolicy: '" + pull +
                           "' is not one of Always, IfNotPresent, Never");
  }
  if (t.value("image", "").empty()) {
    if (defaults.image.empty()) {
      return InvalidArgument(p + "image: required (the controller has no --worker-image)");
    }
    t["image"] = defaults.image;
  }
  out.pod_template = t;
  return Status::Ok();
}

Status ParseCache(const Json& spec, const JobDefaults& defaults, JobSpec& out) {
  const std::string p = "spec.cache.";
  Json c = spec.value("cache", Json::object());
  if (!c.is_object()) return InvalidArgument("spec.cache: must be an object");
  CCLTUNE_RETURN_IF_ERROR(OnlyKnownFields(c, {"redisURL", "passwordSecretRef", "publish"}, p));
  CCLTUNE_RETURN_IF_ERROR(CheckType(c, "redisURL", p, Json::value_t::string, "a string"));
  out.redis_url = c.value("redisURL", defaults.redis_url);
  if (out.redis_url.empty()) return InvalidArgument(p + "redisURL: required (no --redis-url)");
  auto url = core::ParseRedisUrl(out.redis_url);
  if (!url.ok()) return InvalidArgument(p + "redisURL: " + url.status().message());
  if (!url->password.empty()) {
    return InvalidArgument(p + "redisURL: must not hold a password; use passwordSecretRef");
  }
  CCLTUNE_RETURN_IF_ERROR(BoolField(c, "publish", p, &out.publish));
  out.password_ref = defaults.password_ref;
  if (!c.contains("passwordSecretRef")) return Status::Ok();
  const Json& ref = c["passwordSecretRef"];
  if (!ref.is_object() || !ref.value("name", Json()).is_string() ||
      !ref.value("key", Json()).is_string() || ref["name"].get<std::string>().empty() ||
      ref["key"].get<std::string>().empty()) {
    return InvalidArgument(p + "passwordSecretRef: needs non-empty string fields name and key");
  }
  out.password_ref = SecretKeyRef{ref["name"], ref["key"]};
  return Status::Ok();
}

// Where the pods' metrics go at the end (docs/design.md §6): the job's own values override
// the controller's; an empty pushgateway turns the controller's off for this job.
Status ParseMetrics(const Json& spec, const JobDefaults& defaults, JobSpec& out) {
  const std::string p = "spec.metrics.";
  Json m = spec.value("metrics", Json::object());
  if (!m.is_object()) return InvalidArgument("spec.metrics: must be an object");
  CCLTUNE_RETURN_IF_ERROR(OnlyKnownFields(m, {"pushgateway", "lingerSeconds"}, p));
  CCLTUNE_RETURN_IF_ERROR(CheckType(m, "pushgateway", p, Json::value_t::string, "a string"));
  out.pushgateway = m.value("pushgateway", defaults.pushgateway);
  if (!out.pushgateway.empty()) {
    CCLTUNE_RETURN_IF_ERROR(CheckPushgatewayUrl(out.pushgateway, p + "pushgateway"));
  }
  out.metrics_linger_seconds = defaults.metrics_linger_seconds;
  return IntField(m, "lingerSeconds", p, 0, kMaxMetricsLingerSeconds, &out.metrics_linger_seconds);
}

Status ParseShape(const Json& spec, JobSpec& out) {
  const std::string p = "spec.";
  if (!spec.contains("worldSize")) return InvalidArgument("spec.worldSize: required");
  if (!spec.contains("gpusPerPod")) return InvalidArgument("spec.gpusPerPod: required");
  CCLTUNE_RETURN_IF_ERROR(IntField(spec, "worldSize", p, 1, 4096, &out.world_size));
  CCLTUNE_RETURN_IF_ERROR(IntField(spec, "gpusPerPod", p, 1, 64, &out.gpus_per_pod));
  if (out.world_size % out.gpus_per_pod != 0) {
    return InvalidArgument("spec.worldSize: " + std::to_string(out.world_size) +
                           " is not a multiple of spec.gpusPerPod (" +
                           std::to_string(out.gpus_per_pod) + ")");
  }
  CCLTUNE_RETURN_IF_ERROR(CheckType(spec, "backend", p, Json::value_t::string, "a string"));
  out.backend = spec.value("backend", "nccl");
  if (out.backend != "nccl" && out.backend != "host") {
    return InvalidArgument("spec.backend: '" + out.backend + "' is not one of nccl, host");
  }
  return Status::Ok();
}

Status ParseLifecycle(const Json& spec, JobSpec& out) {
  const std::string p = "spec.";
  CCLTUNE_RETURN_IF_ERROR(IntField(spec, "backoffLimit", p, 0, 100, &out.backoff_limit));
  int v = 0;
  if (spec.contains("activeDeadlineSeconds")) {
    CCLTUNE_RETURN_IF_ERROR(IntField(spec, "activeDeadlineSeconds", p, 1, 1 << 30, &v));
    out.active_deadline_seconds = v;
  }
  if (spec.contains("ttlSecondsAfterFinished")) {
    CCLTUNE_RETURN_IF_ERROR(IntField(spec, "ttlSecondsAfterFinished", p, 0, 1 << 30, &v));
    out.ttl_seconds_after_finished = v;
  }
  return BoolField(spec, "suspend", p, &out.suspend);
}

Status ParsePlanPart(const Json& spec, JobSpec& out) {
  if (!spec.contains("collectives")) return InvalidArgument("spec.collectives: required");
  Json plan = {{"collectives", spec["collectives"]}};
  if (spec.contains("benchmark")) plan["benchmark"] = spec["benchmark"];
  if (spec.contains("search")) plan["search"] = spec["search"];  // the pods' plan carries it
  if (spec.contains("emulatedNodes")) plan["emulatedNodes"] = spec["emulatedNodes"];
  CCLTUNE_ASSIGN_OR_RETURN(out.plan, core::ParsePlan(plan.dump(), {}, "spec."));
  CCLTUNE_RETURN_IF_ERROR(core::ValidatePlan(out.plan, {}, out.backend, "spec."));
  return core::CheckEmulatedNodes(out.plan.emulated_nodes, out.world_size, "spec.emulatedNodes");
}

}  // namespace

Result<JobSpec> ParseJobSpec(const Json& spec, const JobDefaults& defaults) {
  if (!spec.is_object()) return InvalidArgument("spec: required");
  JobSpec out;
  CCLTUNE_RETURN_IF_ERROR(
      OnlyKnownFields(spec,
                      {"worldSize", "gpusPerPod", "backend", "template", "collectives", "benchmark",
                       "search", "emulatedNodes", "cache", "backoffLimit", "activeDeadlineSeconds",
                       "ttlSecondsAfterFinished", "suspend", "metrics"},
                      "spec."));
  CCLTUNE_RETURN_IF_ERROR(ParseShape(spec, out));
  CCLTUNE_RETURN_IF_ERROR(ParseTemplate(spec, defaults, out));
  CCLTUNE_RETURN_IF_ERROR(ParsePlanPart(spec, out));
  CCLTUNE_RETURN_IF_ERROR(ParseCache(spec, defaults, out));
  CCLTUNE_RETURN_IF_ERROR(ParseLifecycle(spec, out));
  CCLTUNE_RETURN_IF_ERROR(ParseMetrics(spec, defaults, out));
  return out;
}

}  // namespace ccltune::controller

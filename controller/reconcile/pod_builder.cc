#include "controller/reconcile/pod_builder.h"

#include "core/node/node_name.h"

namespace ccltune::controller {

using Json = nlohmann::json;

std::string PlanConfigMapName(const std::string& job_name) { return job_name + "-plan"; }
std::string PodName(const std::string& job_name, int attempt, int pod_index) {
  return job_name + "-a" + std::to_string(attempt) + "-" + std::to_string(pod_index);
}
std::string PodGroupName(const std::string& job_name, int attempt) {
  return job_name + "-a" + std::to_string(attempt);
}

Json OwnerReference(const Json& job) {
  return {{"apiVersion", "ccltune.io/v1alpha1"},
          {"kind", "CollectiveTuningJob"},
          {"name", job["metadata"]["name"]},
          {"uid", job["metadata"]["uid"]},
          {"controller", true},
          {"blockOwnerDeletion", true}};
}

Json BuildPlanConfigMap(const JobContext& ctx) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata",
           {{"name", PlanConfigMapName(ctx.name())},
            {"namespace", ctx.ns()},
            {"labels", {{kJobLabel, ctx.name()}}},
            {"ownerReferences", Json::array({OwnerReference(ctx.job)})}}},
          {"data", {{kPlanKey, core::PlanToJson(ctx.spec.plan)}}}};
}

namespace {

Json EnvVar(const std::string& name, const std::string& value) {
  return {{"name", name}, {"value", value}};
}

// An env var the kubelet fills from the pod object (downward API).
Json FieldRefEnv(const std::string& name, const std::string& field_path) {
  return {{"name", name}, {"valueFrom", {{"fieldRef", {{"fieldPath", field_path}}}}}};
}

// docs/design.md §6 env contract. The Redis password is referenced from its Secret, so it never
// appears in the pod spec, the ConfigMap or the controller's memory.
Json WorkerEnv(const JobContext& ctx, int attempt, int pod_index) {
  const JobSpec& s = ctx.spec;
  Json env = Json::array(
      {EnvVar("CCLTUNE_JOB_ID", ctx.uid()), EnvVar("CCLTUNE_ATTEMPT", std::to_string(attempt)),
       EnvVar("CCLTUNE_POD_INDEX", std::to_string(pod_index)),
       EnvVar("CCLTUNE_WORLD_SIZE", std::to_string(s.world_size)),
       EnvVar("CCLTUNE_RANKS_PER_POD", std::to_string(s.gpus_per_pod)),
       EnvVar("CCLTUNE_REDIS_URL", s.redis_url), EnvVar("CCLTUNE_BACKEND", s.backend),
       EnvVar("CCLTUNE_PLAN_FILE", std::string(kPlanMountDir) + "/" + kPlanKey),
       EnvVar("CCLTUNE_METRICS_PORT", std::to_string(kMetricsPort))});
  // The worker pushes its figures there at the end, so they outlive a job shorter than a
  // scrape interval (docs/metrics.md).
  if (!s.pushgateway.empty()) env.push_back(EnvVar("CCLTUNE_PUSHGATEWAY", s.pushgateway));
  if (s.password_ref) {
    env.push_back(
        {{"name", "CCLTUNE_REDIS_PASSWORD"},
         {"valueFrom",
          {{"secretKeyRef", {{"name", s.password_ref->name}, {"key", s.password_ref->key}}}}}});
  }
  // The host backend's ranks listen on the pod's own address.
  env.push_back(FieldRefEnv("CCLTUNE_POD_IP", "status.podIP"));
  // A rank's node is its pod's node, never its host name (the pod's name): ranks group by it,
  // and their NCCL communicators get it as NCCL_HOSTID (docs/design.md §6).
  env.push_back(FieldRefEnv(core::kNodeNameEnv, "spec.nodeName"));
  return env;
}

Json MetricsPorts(int ranks_per_pod) {
  Json ports = Json::array();
  for (int i = 0; i < ranks_per_pod; ++i) {
    ports.push_back({{"name", i == 0 ? std::string("metrics") : "metrics-" + std::to_string(i)},
                     {"containerPort", kMetricsPort + i},
                     {"protocol", "TCP"}});
  }
  return ports;
}

// The worker's flags that have no variable of their own.
Json WorkerArgs(const JobSpec& s) {
  Json args = Json::array();
  if (!s.publish) args.push_back("--no-publish");
  // Keeps /metrics up after the end, for a last scrape (the pod holds its GPUs meanwhile).
  if (s.metrics_linger_seconds > 0) {
    args.push_back("--metrics-linger");
    args.push_back(std::to_string(s.metrics_linger_seconds));
  }
  return args;
}

Json Container(const JobContext& ctx, const std::string& command, int attempt, int pod_index) {
  const Json& t = ctx.spec.pod_template;
  Json c = {{"name", "worker"},
            {"image", t.value("image", "")},
            {"imagePullPolicy", t.value("imagePullPolicy", "IfNotPresent")},
            {"command", Json::array({command, "worker"})},
            {"env", WorkerEnv(ctx, attempt, pod_index)},
            {"args", WorkerArgs(ctx.spec)},
            {"ports", MetricsPorts(ctx.spec.gpus_per_pod)},
            {"volumeMounts",
             Json::array({{{"name", "plan"}, {"mountPath", kPlanMountDir}, {"readOnly", true}}})},
            // The worker writes its fatal line to /dev/termination-log (the default path);
            // a rank that died before writing one still leaves its log's tail. Either way the
            // job's Failed condition carries the rank's own words (pod_failure.h).
            {"terminationMessagePolicy", "FallbackToLogsOnError"}};
  if (t.contains("resources")) c["resources"] = t["resources"];
  return c;
}

}  // namespace

Json BuildPod(const JobContext& ctx, const std::string& command, int attempt, int pod_index) {
  const Json& t = ctx.spec.pod_template;
  std::string group = PodGroupName(ctx.name(), attempt);
  Json spec = {
      {"restartPolicy", "Never"},
      {"containers", Json::array({Container(ctx, command, attempt, pod_index)})},
      {"volumes", Json::array({{{"name", "plan"},
                                {"configMap", {{"name", PlanConfigMapName(ctx.name())}}}}})}};
  for (const char* k : {"schedulerName", "nodeSelector", "tolerations", "affinity",
                        "priorityClassName", "hostIPC"}) {
    if (t.contains(k)) spec[k] = t[k];
  }
  Json labels = {{kJobLabel, ctx.name()},
                 {kAttemptLabel, std::to_string(attempt)},
                 {kPodIndexLabel, std::to_string(pod_index)},
                 {"scheduling.x-k8s.io/pod-group", group}};
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", PodName(ctx.name(), attempt, pod_index)},
            {"namespace", ctx.ns()},
            {"labels", labels},
            {"annotations", {{"scheduling.k8s.io/group-name", group}}},
            {"ownerReferences", Json::array({OwnerReference(ctx.job)})}}},
          {"spec", spec}};
}

}  // namespace ccltune::controller

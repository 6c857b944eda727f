// Builds the objects of one attempt: the plan ConfigMap (`<job>-plan`, key plan.json) and
// the worker pods (`<job>-a<attempt>-<podIndex>`). Names are deterministic so a restarted
// controller finds (adopts) what it created instead of duplicating it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "controller/job/job_context.h"

namespace ccltune::controller {

inline constexpr const char* kPlanMountDir = "/etc/ccltune/plan";
inline constexpr const char* kPlanKey = "plan.json";
// Each rank of a pod serves /metrics on kMetricsPort + its index in the pod, on container
// ports named "metrics", "metrics-1", … (the chart's PodMonitor scrapes those names).
inline constexpr int kMetricsPort = 9400;

std::string PlanConfigMapName(const std::string& job_name);
std::string PodName(const std::string& job_name, int attempt, int pod_index);
// PodGroup of one attempt, for Volcano (annotation) and scheduler-plugins (label).
std::string PodGroupName(const std::string& job_name, int attempt);

nlohmann::json OwnerReference(const nlohmann::json& job);
nlohmann::json BuildPlanConfigMap(const JobContext& ctx);
// `command` is the worker binary (container command[0]); the image was resolved into
// ctx.spec.pod_template by ParseJobSpec.
nlohmann::json BuildPod(const JobContext& ctx, const std::string& command, int attempt,
                        int pod_index);

}  // namespace ccltune::controller

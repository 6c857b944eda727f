// The Pushgateway group a tuning rank pushes its metrics to (docs/design.md §7), in one place
// because two programs must agree on it: the worker pushes there at the end of a job
// (worker/metrics/metrics_push.h) and the controller deletes it when the job's
// CollectiveTuningJob is deleted (controller/metrics/push_groups.h). The group is
//   job="ccltune", ccltune_job=<job id>, rank=<rank>
// and its path on the Pushgateway is /metrics/job/ccltune/ccltune_job/<id>/rank/<rank>.
// Values a path segment cannot carry go in the Pushgateway's `@base64` form (prometheus-cpp
// 1.0.1 does not apply it itself). Pure functions, thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ccltune::core {

// The Pushgateway's `job` of every tuning rank's group.
inline constexpr char kTuningPushJob[] = "ccltune";

using GroupingLabels = std::vector<std::pair<std::string, std::string>>;

// One grouping label as the Pushgateway's path takes it: {name, value}, or
// {name + "@base64", url-safe base64 of value} when the value is empty or has characters
// outside [A-Za-z0-9_.-].
std::pair<std::string, std::string> GroupingLabel(const std::string& name,
                                                  const std::string& value);

// The grouping labels (besides `job`) of one tuning rank, already in path form.
GroupingLabels TuningPushGrouping(const std::string& job_id, int rank);

// "/metrics/job/ccltune/ccltune_job/<id>/rank/<rank>": append it to a Pushgateway's base URL
// (http[s]://host[:port][/prefix], no trailing slash) to address the rank's group.
std::string TuningPushGroupPath(const std::string& job_id, int rank);

}  // namespace ccltune::core

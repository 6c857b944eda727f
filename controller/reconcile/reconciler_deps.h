// The reconciler's collaborators and the controller's flags that its policy steps use; the
// job's own state is JobContext (controller/job/job_context.h).
#pragma once

#include <chrono>
#include <string>

#include "controller/job/job_spec.h"

namespace ccltune::controller {

class KubeClient;
class JobRedis;
class ControllerMetrics;
class PushGroups;

// Options every policy may need: where to find collaborators and controller flags.
struct ReconcilerDeps {
  KubeClient& kube;
  JobRedis& redis;
  ControllerMetrics& metrics;
  PushGroups& push_groups;  // the ranks' Pushgateway groups, deleted with the job
  JobDefaults defaults;
  std::string ccltune_command = "ccltune";  // container command[0]
  // How long after its deletionTimestamp a job waits for its Pushgateway groups to go.
  std::chrono::seconds push_cleanup_give_up = std::chrono::minutes(5);
};

}  // namespace ccltune::controller

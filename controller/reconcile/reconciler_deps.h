// The reconciler's collaborators and the controller's flags that its policy steps use; the
// job's own state is JobContext (controller/job/job_context.h).
#pragma once

#include <string>

#include "controller/job/job_spec.h"

namespace ccltune::controller {

class KubeClient;
class JobRedis;
class ControllerMetrics;

// Options every policy may need: where to find collaborators and controller flags.
struct ReconcilerDeps {
  KubeClient& kube;
  JobRedis& redis;
  ControllerMetrics& metrics;
  JobDefaults defaults;
  std::string ccltune_command = "ccltune";  // container command[0]
};

}  // namespace ccltune::controller

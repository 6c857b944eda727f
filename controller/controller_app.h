// The controller process: informers (jobs, owned pods) feed a work queue; worker threads
// run JobReconciler while this replica leads; one HTTP server answers /metrics and the
// results API, another, on its own port and threads, /healthz and /readyz. Owns every thread
// it starts.
#pragma once

#include <atomic>
#include <string>

#include "core/base/status.h"

namespace ccltune::controller {

struct ControllerOptions {
  std::string kubeconfig;       // empty: in-cluster config
  std::string watch_namespace;  // empty: all namespaces
  bool leader_elect = false;
  std::string lease_name = "ccltune-controller";
  std::string lease_namespace;                      // empty: the config's namespace
  int metrics_port = 8080;                          // /metrics and the results API
  std::string health_probe_bind_address = ":8081";  // /healthz, /readyz: [HOST]:PORT
  std::string worker_image;
  std::string ccltune_command = "ccltune";
  std::string redis_url = "redis://ccltune-redis:6379/0";
  std::string redis_password_secret;  // "name/key" given to pods of jobs without one
  int workers = 1;
  int watch_timeout_seconds = 300;
  std::string identity;  // empty: hostname + random suffix
};

// Runs until `stop` becomes true (SIGTERM). Errors: bad configuration (InvalidArgument),
// port in use.
core::Status RunController(const ControllerOptions& options, const std::atomic<bool>& stop);

}  // namespace ccltune::controller

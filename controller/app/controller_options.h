// The controller's flags (controller/app/main.cc parses them), apart from RunController so
// that the process's shared state (app_state.h) can hold them without including the runner.
#pragma once

#include <string>

namespace ccltune::controller {

struct ControllerOptions {
  std::string kubeconfig;       // empty: in-cluster config
  std::string watch_namespace;  // empty: all namespaces
  bool leader_elect = false;
  std::string lease_name = "ccltune-controller";
  std::string lease_namespace;      // empty: the config's namespace
  int lease_duration_seconds = 15;  // kube-controller-manager's defaults
  double renew_deadline_seconds = 10;
  double retry_period_seconds = 2;
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

}  // namespace ccltune::controller

// The controller's flags (controller/app/main.cc parses them), apart from RunController so
// that the process's shared state (app_state.h) can hold them without including the runner.
#pragma once

#include <string>

namespace ccltune::controller {

// The pod-injection webhook (docs/inject.md): off while port is 0 and bind_address empty.
struct WebhookOptions {
  int port = 0;                                // HTTPS, e.g. 9443
  std::string bind_address;                    // [HOST]:PORT; empty: every interface, `port`
  std::string ns;                              // of the Secret; empty: the config's
  std::string secret = "ccltune-webhook-tls";  // tls.crt, tls.key, ca.crt
  std::string config_name = "ccltune-inject";  // MutatingWebhookConfiguration
  std::string hosts;                           // comma list; empty: the Service's names in `ns`
  std::string service = "ccltune-webhook";
  bool cert_manager = false;  // cert-manager writes the Secret and the caBundle
  int cert_validity_seconds = 90 * 24 * 3600;
  int cert_check_seconds = 60;
  std::string image;      // init container image; empty: --worker-image
  std::string redis_url;  // programs' cache; empty: --redis-url
  std::string reader_secret = "ccltune-redis-reader/password";
  std::string telemetry_secret = "ccltune-redis-telemetry/password";
  int metrics_port = 9464;
};

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
  std::string metrics_bind_address;  // [HOST]:PORT; empty: every interface, metrics_port
  std::string health_probe_bind_address = ":8081";  // /healthz, /readyz: [HOST]:PORT
  std::string worker_image;
  std::string ccltune_command = "ccltune";
  std::string redis_url = "redis://ccltune-redis:6379/0";
  std::string redis_password_secret;  // "name/key" given to pods of jobs without one
  // Tuning pods' metrics at the end of a job (docs/metrics.md), for jobs without spec.metrics.
  std::string pushgateway_url;                    // empty: no push
  int metrics_linger_seconds = 0;                 // /metrics kept up after the end
  int pushgateway_cleanup_timeout_seconds = 300;  // a deleted job waits this long for its groups
  int workers = 1;
  int watch_timeout_seconds = 300;
  std::string identity;  // empty: hostname + random suffix
  WebhookOptions webhook;
};

}  // namespace ccltune::controller

// ccltune-controller: the CollectiveTuningJob operator (docs/design.md §6). Flags → RunController;
// SIGTERM/SIGINT stop it (the Lease is released so a standby takes over at once).
// `--version`: "ccltune-controller <project version>", the version of its ccltune images.
#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>

#include "controller/admission/pod_injection.h"
#include "controller/admission/review_shape.h"
#include "controller/app/controller_app.h"
#include "controller/http/bind_address.h"
#include "controller/job/job_spec.h"
#include "core/base/log.h"

namespace {
std::atomic<bool> g_stop{false};

// The pod-injection webhook's flags (docs/inject.md); returns --webhook-port's.
CLI::Option* AddWebhookFlags(CLI::App& cli, ccltune::controller::WebhookOptions& w) {
  auto* port = cli.add_option("--webhook-port", w.port,
                              "HTTPS port of the pod-injection webhook on every interface (0: off)")
                   ->check(CLI::Range(0, 65535));
  cli.add_option("--webhook-bind-address", w.bind_address,
                 "[HOST]:PORT of the webhook, HOST an IPv4 address (default: every interface, "
                 "--webhook-port)");
  cli.add_option("--webhook-namespace", w.ns, "namespace of its Secret (default: the config's)");
  cli.add_option("--webhook-secret", w.secret, "Secret holding tls.crt, tls.key, ca.crt");
  cli.add_option("--webhook-config", w.config_name,
                 "MutatingWebhookConfiguration whose caBundle the controller keeps current");
  cli.add_option("--webhook-service", w.service, "Service in front of the webhook");
  cli.add_option("--webhook-hosts", w.hosts,
                 "comma list of certificate names/IPs (default: the Service's DNS names)");
  cli.add_flag("--webhook-cert-manager", w.cert_manager,
               "cert-manager writes the Secret and caBundle; only load it");
  cli.add_option("--webhook-cert-validity", w.cert_validity_seconds,
                 "seconds a serving certificate is valid (renewed after two thirds)")
      ->check(CLI::Range(30, 10 * 365 * 24 * 3600));
  cli.add_option("--webhook-cert-check", w.cert_check_seconds,
                 "seconds between checks of the Secret")
      ->check(CLI::Range(1, 3600));
  cli.add_option("--inject-image", w.image, "init container image (default: --worker-image)");
  cli.add_option("--inject-redis-url", w.redis_url,
                 "cache URL for programs (default: --redis-url)");
  cli.add_option("--inject-reader-secret", w.reader_secret,
                 "NAME/KEY, in the pod's namespace, of the ccltune-reader password");
  cli.add_option("--inject-telemetry-secret", w.telemetry_secret,
                 "NAME/KEY, in the pod's namespace, of the ccltune-telemetry password");
  cli.add_option("--inject-metrics-port", w.metrics_port, "programs' metrics port")
      ->check(CLI::Range(1, 65535));
  return port;
}

// A port flag and its bind-address flag both given (a manifest's --webhook-port, an overlay's
// --webhook-bind-address) must name one port. A malformed address is RunController's to name.
ccltune::core::Status SamePort(const CLI::Option* port_flag, int port, const std::string& bind_flag,
                               const std::string& bind) {
  if (port_flag->count() == 0 || bind.empty()) return ccltune::core::Status::Ok();
  auto at = ccltune::controller::ParseBindAddress(bind_flag, bind);
  if (!at.ok() || at->port == port) return ccltune::core::Status::Ok();
  return ccltune::core::InvalidArgument(bind_flag + " " + bind + " and its port flag's " +
                                        std::to_string(port) +
                                        " name different ports: give one, or the same port");
}
// Where tuning pods' metrics go at the end of a job (docs/metrics.md); spec.metrics overrides.
void AddWorkerMetricsFlags(CLI::App& cli, ccltune::controller::ControllerOptions& o) {
  cli.add_option("--pushgateway-url", o.pushgateway_url,
                 "http[s]://host[:port][/path] of the Pushgateway tuning pods push to at the end "
                 "(jobs without spec.metrics.pushgateway; default: none)");
  cli.add_option("--metrics-linger", o.metrics_linger_seconds,
                 "seconds tuning pods keep /metrics up after the end, for a last scrape (jobs "
                 "without spec.metrics.lingerSeconds)")
      ->check(CLI::Range(0, ccltune::controller::kMaxMetricsLingerSeconds));
  cli.add_option("--pushgateway-cleanup-timeout", o.pushgateway_cleanup_timeout_seconds,
                 "seconds a deleted job waits for its Pushgateway groups to be deleted")
      ->check(CLI::Range(0, 86400));
}
extern "C" void OnSignal(int) { g_stop = true; }
// `ccltune-controller inject-pod [--redis-url URL] [--image IMAGE] < pod.json`: the pod as the
// webhook would leave it (the same InjectPod), for scripts that run a program under an injected
// pod's environment without a cluster (tests/gpu/inject_on_device.sh) and for reading a patch.
int InjectPodCommand(const ccltune::controller::InjectConfig& config) {
  nlohmann::json pod = nlohmann::json::parse(std::cin, nullptr, false);
  if (pod.is_discarded()) {
    std::cerr << "inject-pod: stdin is not a JSON pod\n";
    return 2;
  }
  if (ccltune::core::Status s = ccltune::controller::CheckPodShape(pod, ""); !s.ok()) {
    std::cerr << "inject-pod: " << s.message() << "\n";
    return 2;
  }
  ccltune::controller::Injection inj = ccltune::controller::InjectPod(pod, config);
  std::cout << pod.patch(inj.patch).dump(2) << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ccltune::controller::ControllerOptions o;
  CLI::App cli{"ccltune-controller: runs CollectiveTuningJobs as pods"};
  cli.set_version_flag("--version", std::string("ccltune-controller ") + CCLTUNE_VERSION,
                       "Print the version and exit");
  cli.add_option("--kubeconfig", o.kubeconfig, "kubeconfig file (default: in-cluster config)");
  cli.add_option("--namespace", o.watch_namespace, "watch one namespace (default: all)");
  cli.add_flag("--leader-elect", o.leader_elect, "elect a leader on a Lease before reconciling");
  cli.add_option("--lease-name", o.lease_name, "Lease name for leader election");
  cli.add_option("--lease-namespace", o.lease_namespace,
                 "Lease namespace (default: the config's namespace)");
  cli.add_option("--leader-elect-lease-duration", o.lease_duration_seconds,
                 "seconds a standby waits after the leader's last renewal before taking over")
      ->check(CLI::Range(1, 3600));
  cli.add_option("--leader-elect-renew-deadline", o.renew_deadline_seconds,
                 "seconds the leader keeps trying to renew before it stops (and writes nothing)")
      ->check(CLI::Range(0.1, 3600.0));
  cli.add_option("--leader-elect-retry-period", o.retry_period_seconds,
                 "seconds between acquire/renew attempts")
      ->check(CLI::Range(0.1, 3600.0));
  auto* metrics_port = cli.add_option("--metrics-port", o.metrics_port,
                                      "port of /metrics and /api/v1, every interface")
                           ->check(CLI::Range(0, 65535));
  cli.add_option("--metrics-bind-address", o.metrics_bind_address,
                 "[HOST]:PORT of /metrics and /api/v1, HOST an IPv4 address (default: every "
                 "interface, --metrics-port)");
  cli.add_option("--health-probe-bind-address", o.health_probe_bind_address,
                 "[HOST]:PORT of /healthz and /readyz, their own listener (default :8081)");
  cli.add_option("--worker-image", o.worker_image, "image for jobs without spec.template.image");
  cli.add_option("--ccltune-command", o.ccltune_command, "container command of worker pods");
  cli.add_option("--redis-url", o.redis_url, "Redis for jobs without spec.cache.redisURL");
  cli.add_option("--redis-password-secret", o.redis_password_secret,
                 "NAME/KEY of the Secret holding the default Redis's password (given to pods "
                 "by reference; the controller reads its own from env CCLTUNE_REDIS_PASSWORD)");
  AddWorkerMetricsFlags(cli, o);
  cli.add_option("--workers", o.workers, "reconcile worker threads")->check(CLI::Range(1, 64));
  cli.add_option("--watch-timeout", o.watch_timeout_seconds, "watch timeoutSeconds")
      ->check(CLI::Range(1, 3600));
  cli.add_option("--identity", o.identity, "leader-election identity (default: host-random)");
  CLI::Option* webhook_port = AddWebhookFlags(cli, o.webhook);
  ccltune::controller::InjectConfig inject;
  auto* inject_cmd =
      cli.add_subcommand("inject-pod", "Print the pod on stdin as the webhook patches it");
  inject_cmd->add_option("--redis-url", inject.redis_url, "the cache URL programs get");
  inject_cmd->add_option("--image", inject.image, "the init container's image");
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli.exit(e) == 0 ? 0 : 2;
  }
  if (inject_cmd->parsed()) return InjectPodCommand(inject);
  for (const ccltune::core::Status& s :
       {SamePort(metrics_port, o.metrics_port, "--metrics-bind-address", o.metrics_bind_address),
        SamePort(webhook_port, o.webhook.port, "--webhook-bind-address", o.webhook.bind_address)}) {
    if (!s.ok()) {
      std::cerr << "ccltune-controller: " << s.message() << "\n";
      return 2;
    }
  }
  ccltune::core::InitLogging("controller");
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  ccltune::core::Status s = ccltune::controller::RunController(o, g_stop);
  if (!s.ok()) {
    std::cerr << "ccltune-controller: " << s.ToString() << "\n";
    return s.code() == ccltune::core::StatusCode::kInvalidArgument ? 2 : 1;
  }
  return 0;
}

// ccltune-controller: the CollectiveTuningJob operator (docs/design.md §6). Flags → RunController;
// SIGTERM/SIGINT stop it (the Lease is released so a standby takes over at once).
// `--version`: "ccltune-controller <project version>", the version of its ccltune images.
#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>

#include "controller/app/controller_app.h"
#include "core/base/log.h"

namespace {
std::atomic<bool> g_stop{false};
extern "C" void OnSignal(int) { g_stop = true; }
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
  cli.add_option("--metrics-port", o.metrics_port, "port of /metrics and /api/v1")
      ->check(CLI::Range(0, 65535));
  cli.add_option("--health-probe-bind-address", o.health_probe_bind_address,
                 "[HOST]:PORT of /healthz and /readyz, their own listener (default :8081)");
  cli.add_option("--worker-image", o.worker_image, "image for jobs without spec.template.image");
  cli.add_option("--ccltune-command", o.ccltune_command, "container command of worker pods");
  cli.add_option("--redis-url", o.redis_url, "Redis for jobs without spec.cache.redisURL");
  cli.add_option("--redis-password-secret", o.redis_password_secret,
                 "NAME/KEY of the Secret holding the default Redis's password (given to pods "
                 "by reference; the controller reads its own from env CCLTUNE_REDIS_PASSWORD)");
  cli.add_option("--workers", o.workers, "reconcile worker threads")->check(CLI::Range(1, 64));
  cli.add_option("--watch-timeout", o.watch_timeout_seconds, "watch timeoutSeconds")
      ->check(CLI::Range(1, 3600));
  cli.add_option("--identity", o.identity, "leader-election identity (default: host-random)");
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli.exit(e) == 0 ? 0 : 2;
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

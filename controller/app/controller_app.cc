#include "controller/app/controller_app.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "controller/app/app_state.h"
#include "controller/cache/job_redis.h"
#include "controller/http/bind_address.h"
#include "controller/http/http_server.h"
#include "controller/http/results_api.h"
#include "controller/job/pushgateway_url.h"
#include "controller/kube/kube_client.h"
#include "controller/kube/kube_paths.h"
#include "controller/machinery/fenced_kube_client.h"
#include "controller/machinery/informer.h"
#include "controller/machinery/leader_elector.h"
#include "controller/metrics/metrics.h"
#include "controller/reconcile/reconciler.h"
#include "core/base/log.h"

namespace ccltune::controller {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

std::string DefaultIdentity() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::random_device rd;
  char suffix[16];
  snprintf(suffix, sizeof(suffix), "%08x", rd());
  return std::string(host) + "-" + suffix;
}

core::Result<JobDefaults> MakeDefaults(const ControllerOptions& o) {
  JobDefaults d{o.worker_image, o.redis_url, std::nullopt, o.pushgateway_url,
                o.metrics_linger_seconds};
  if (!o.pushgateway_url.empty()) {
    CCLTUNE_RETURN_IF_ERROR(CheckPushgatewayUrl(o.pushgateway_url, "--pushgateway-url"));
  }
  if (!o.redis_password_secret.empty()) {
    auto slash = o.redis_password_secret.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == o.redis_password_secret.size()) {
      return core::InvalidArgument("--redis-password-secret: expected NAME/KEY");
    }
    d.password_ref = SecretKeyRef{o.redis_password_secret.substr(0, slash),
                                  o.redis_password_secret.substr(slash + 1)};
  }
  return d;
}

core::Result<BindAddress> ApiAddress(const ControllerOptions& o) {
  return ListenAddress("--metrics-bind-address", o.metrics_bind_address, o.metrics_port);
}

// The probes' own port: never the API port, whose load must not reach them.
core::Result<BindAddress> ProbeAddress(const ControllerOptions& o, const BindAddress& api) {
  const std::string flag = "--health-probe-bind-address";
  CCLTUNE_ASSIGN_OR_RETURN(BindAddress at, ParseBindAddress(flag, o.health_probe_bind_address));
  if (at.port != 0 && at.port == api.port) {
    return core::InvalidArgument(flag + ": port " + std::to_string(at.port) +
                                 " is the API's too (--metrics-port or --metrics-bind-address); "
                                 "the probes need a port of their own");
  }
  return at;
}

LeaderElectionConfig ElectionConfig(const ControllerOptions& o, const KubeConfig& config) {
  LeaderElectionConfig le;
  le.ns = o.lease_namespace.empty() ? config.default_namespace : o.lease_namespace;
  le.name = o.lease_name;
  le.identity = o.identity.empty() ? DefaultIdentity() : o.identity;
  le.lease_duration = std::chrono::seconds(o.lease_duration_seconds);
  le.renew_deadline = std::chrono::milliseconds(std::lround(o.renew_deadline_seconds * 1000));
  le.retry_period = std::chrono::milliseconds(std::lround(o.retry_period_seconds * 1000));
  return le;
}

// Reconciles only while the fence is open: a leader whose renewal is overdue (frozen and
// resumed) waits for its elector instead of starting a reconcile whose writes would be refused.
bool MayReconcile(const App& app) {
  return app.leader.load() && (!app.elector || app.elector->CheckFence().ok());
}

long long NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void ReconcileOne(App& app, const std::string& key) {
  auto t0 = std::chrono::steady_clock::now();
  auto r = app.reconciler->Reconcile(key);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r.ok() && !MayReconcile(app)) {
    // Stopped by the fence: not the job's fault, so no back-off; the leader (this replica
    // once renewed, or another) reconciles the key again.
    core::LogInfo("reconcile " + key + " stopped: " + r.status().message());
    app.metrics.CountReconcile("error", secs);
    app.queue.AddAfter(key, std::chrono::milliseconds(500));
    return;
  }
  if (!r.ok()) {
    core::LogWarn("reconcile " + key + ": " + r.status().ToString());
    app.metrics.CountReconcile("error", secs);
    app.queue.AddRateLimited(key);
    return;
  }
  app.queue.Forget(key);
  if (r->requeue_after) app.queue.AddAfter(key, *r->requeue_after);
  app.metrics.CountReconcile(r->requeue_after ? "requeue" : "ok", secs);
}

// Jobs enqueue their own key; pods enqueue their job's (label ccltune.io/job).
void MakeInformers(App& app) {
  const std::string& ns = app.options.watch_namespace;
  int timeout = app.options.watch_timeout_seconds;
  App* a = &app;
  app.jobs = std::make_unique<Informer>(
      *app.kube, "jobs", JobsPath(ns), "",
      [a](const std::string&, const Json& job) { a->queue.Add(ObjectKey(job)); }, timeout);
  app.pods = std::make_unique<Informer>(
      *app.kube, "pods", PodsPath(ns), kJobLabel,
      [a](const std::string&, const Json& pod) {
        const Json& md = pod["metadata"];
        std::string job = md.value("labels", Json::object()).value(kJobLabel, "");
        if (!job.empty()) a->queue.Add(md.value("namespace", "") + "/" + job);
      },
      timeout);
}

void WorkerLoop(App& app, const std::atomic<bool>& stop) {
  while (!stop.load()) {
    app.worker_heartbeat_ms = NowMs();
    if (!MayReconcile(app)) {
      std::this_thread::sleep_for(100ms);
      continue;
    }
    auto key = app.queue.Get(500ms);
    if (!key) continue;
    if (MayReconcile(app)) {
      ReconcileOne(app, *key);
    } else {
      app.queue.Add(*key);  // picked up just as the lease went: keep it for the next leader
    }
    app.queue.Done(*key);
  }
}

}  // namespace

core::Status RunController(const ControllerOptions& options, const std::atomic<bool>& stop) {
  CCLTUNE_ASSIGN_OR_RETURN(BindAddress api_at, ApiAddress(options));
  CCLTUNE_ASSIGN_OR_RETURN(BindAddress probe_at, ProbeAddress(options, api_at));
  CCLTUNE_RETURN_IF_ERROR(CheckWebhookFlags(options));
  CCLTUNE_ASSIGN_OR_RETURN(KubeConfig config, options.kubeconfig.empty()
                                                  ? InClusterConfig()
                                                  : LoadKubeconfig(options.kubeconfig));
  CCLTUNE_ASSIGN_OR_RETURN(JobDefaults defaults, MakeDefaults(options));
  LeaderElectionConfig le = ElectionConfig(options, config);
  if (options.leader_elect) CCLTUNE_RETURN_IF_ERROR(CheckLeaderElectionConfig(le));
  auto app = std::make_unique<App>();
  app->options = options;
  // The identity is in the User-Agent too, so the API server's audit log tells replicas apart.
  app->kube = MakeCpprestKubeClient(
      config, std::string("ccltune-controller/") + CCLTUNE_VERSION + " (" + le.identity + ")");
  app->writer = std::make_unique<FencedKubeClient>(*app->kube, [a = app.get()] {
    return a->elector ? a->elector->CheckFence() : core::Status::Ok();
  });
  const char* pw = std::getenv("CCLTUNE_REDIS_PASSWORD");
  app->redis = std::make_unique<JobRedis>(pw ? pw : "");
  app->results = std::make_unique<ResultsApi>(options.redis_url, pw ? pw : "");
  app->reconciler = std::make_unique<JobReconciler>(ReconcilerDeps{
      *app->writer, *app->redis, app->metrics, app->push_groups, defaults, options.ccltune_command,
      std::chrono::seconds(options.pushgateway_cleanup_timeout_seconds)});
  MakeInformers(*app);  // before the servers: their handlers read app->jobs and app->pods
  CCLTUNE_ASSIGN_OR_RETURN(app->webhook,
                           StartWebhook(options, config.default_namespace, *app->kube, stop));
  CCLTUNE_ASSIGN_OR_RETURN(
      auto probes, HttpServer::Start(probe_at, HttpServer::kProbeThreads, MakeProbeHandler(*app)));
  CCLTUNE_ASSIGN_OR_RETURN(auto http,
                           HttpServer::Start(api_at, HttpServer::kThreads, MakeApiHandler(*app)));
  core::LogInfo("serving /metrics /api/v1 on " + api_at.host + ":" + std::to_string(http->port()) +
                ", /healthz /readyz on " + probe_at.host + ":" + std::to_string(probes->port()));
  std::vector<std::thread> threads;
  // Informer threads block inside watch reads; they end with the process, not joined.
  App* raw = app.get();
  std::thread([raw, &stop] { raw->jobs->Run(stop); }).detach();
  std::thread([raw, &stop] { raw->pods->Run(stop); }).detach();
  if (options.leader_elect) {
    App* a = app.get();
    app->elector = std::make_unique<LeaderElector>(*app->kube, le, [a](bool leading) {
      a->leader = leading;
      a->metrics.SetLeader(leading);
    });
    threads.emplace_back([&app, &stop] { app->elector->Run(stop); });
  } else {
    app->leader = true;
    app->metrics.SetLeader(true);
  }
  for (int i = 0; i < std::max(1, options.workers); ++i) {
    threads.emplace_back([&app, &stop] { WorkerLoop(*app, stop); });
  }
  while (!stop.load()) std::this_thread::sleep_for(100ms);
  app->queue.ShutDown();
  for (auto& t : threads) t.join();
  if (app->elector) app->elector->Release();
  core::LogInfo("controller stopped");
  // The detached informer threads still reference the App: never free it under them.
  app.release();
  return core::Status::Ok();
}

}  // namespace ccltune::controller

// Internal: the state shared by the controller's threads (informers, workers, elector, HTTP
// handlers). Only controller_app.cc and http_routes.cc use it.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "controller/app/controller_options.h"
#include "controller/app/webhook.h"
#include "controller/cache/job_redis.h"
#include "controller/http/http_server.h"
#include "controller/http/results_api.h"
#include "controller/kube/kube_client.h"
#include "controller/machinery/fenced_kube_client.h"
#include "controller/machinery/informer.h"
#include "controller/machinery/leader_elector.h"
#include "controller/machinery/work_queue.h"
#include "controller/metrics/metrics.h"
#include "controller/metrics/push_groups.h"
#include "controller/reconcile/reconciler.h"

namespace ccltune::controller {

// Everything the process runs, so thread bodies can reach it through one pointer.
struct App {
  ControllerOptions options;
  std::unique_ptr<KubeClient> kube;    // informers, the elector: reads and the Lease
  std::unique_ptr<KubeClient> writer;  // the reconciler's: writes fenced by the elector
  ControllerMetrics metrics;
  PushGroups push_groups;  // deleted jobs' groups on the Pushgateway (finalizer)
  std::unique_ptr<JobRedis> redis;
  WorkQueue queue;
  std::unique_ptr<Informer> jobs, pods;
  std::unique_ptr<JobReconciler> reconciler;
  std::unique_ptr<LeaderElector> elector;
  std::unique_ptr<ResultsApi> results;
  std::unique_ptr<Webhook> webhook;  // null while --webhook-port is 0
  std::atomic<bool> leader{false};
  std::atomic<long long> worker_heartbeat_ms{0};
  // ccltune_cache_entries walks Redis: the last count and when it was taken (steady ms).
  std::mutex result_count_mu;
  long long result_count_at_ms = -1;
  double result_count = 0;
};

// The probe port's routes (/healthz, /readyz) and the API port's (/metrics, /api/v1/...).
HttpHandler MakeProbeHandler(App& app);
HttpHandler MakeApiHandler(App& app);

}  // namespace ccltune::controller

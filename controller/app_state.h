// Internal: the state shared by the controller's threads (informers, workers, elector, HTTP
// handlers). Only controller_app.cc and http_routes.cc use it.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "controller/controller_app.h"
#include "controller/http_server.h"
#include "controller/informer.h"
#include "controller/job_redis.h"
#include "controller/kube_client.h"
#include "controller/leader_elector.h"
#include "controller/metrics.h"
#include "controller/reconciler.h"
#include "controller/results_api.h"
#include "controller/work_queue.h"

namespace ccltune::controller {

// Everything the process runs, so thread bodies can reach it through one pointer.
struct App {
  ControllerOptions options;
  std::unique_ptr<KubeClient> kube;
  ControllerMetrics metrics;
  std::unique_ptr<JobRedis> redis;
  WorkQueue queue;
  std::unique_ptr<Informer> jobs, pods;
  std::unique_ptr<JobReconciler> reconciler;
  std::unique_ptr<LeaderElector> elector;
  std::unique_ptr<ResultsApi> results;
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

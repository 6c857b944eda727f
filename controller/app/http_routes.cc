// Routes of the controller's two HTTP ports: the probe port (/healthz, /readyz) and the API
// port (Prometheus metrics, results API).
#include <chrono>
#include <map>
#include <mutex>

#include "controller/app/app_state.h"

namespace ccltune::controller {
namespace {

using Json = nlohmann::json;

// A worker loop that has not ticked for this long is stuck (a reconcile is bounded by its
// HTTP and Redis timeouts, well below this).
constexpr long long kWorkerStuckMs = 120000;

long long NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

HttpResponse Healthz(App& app) {
  if (NowMs() - app.worker_heartbeat_ms.load() > kWorkerStuckMs) {
    return {503, "text/plain", "worker loop stuck\n"};
  }
  return {200, "text/plain", "ok\n"};
}

// Ready once both caches synced; the body says whether this replica leads or stands by.
HttpResponse Readyz(App& app) {
  if (!app.jobs || !app.pods || !app.jobs->synced() || !app.pods->synced()) {
    return {503, "text/plain", "not ready: informer caches not synced\n"};
  }
  return {200, "text/plain",
          std::string("ready: ") + (app.leader.load() ? "leader" : "standby") + "\n"};
}

// Counting result records walks Redis: do it at most every 15 s.
double CachedResultCount(App& app) {
  std::lock_guard<std::mutex> lock(app.result_count_mu);
  if (app.result_count_at_ms >= 0 && NowMs() - app.result_count_at_ms < 15000) {
    return app.result_count;
  }
  auto n = app.results->CountRecords();
  if (n.ok()) app.result_count = static_cast<double>(*n);
  app.result_count_at_ms = NowMs();
  return app.result_count;
}

HttpResponse Metrics(App& app) {
  if (app.jobs) {
    std::map<std::string, int> phases;
    app.jobs->Visit([&](const Json& job) {
      phases[job.value("status", Json::object()).value("phase", "Pending")]++;
    });
    app.metrics.SetJobsByPhase(phases);
    app.metrics.SetInformerEntries("collectivetuningjobs", static_cast<double>(app.jobs->size()));
  }
  if (app.pods) app.metrics.SetInformerEntries("pods", static_cast<double>(app.pods->size()));
  app.metrics.SetResultCacheEntries(CachedResultCount(app));
  return {200, core::kTextContentType, app.metrics.Text()};
}

}  // namespace

HttpHandler MakeProbeHandler(App& app) {
  App* a = &app;
  return [a](const HttpRequest& req) -> HttpResponse {
    if (req.path == "/healthz") return Healthz(*a);
    if (req.path == "/readyz") return Readyz(*a);
    return {404, "text/plain", "not found (this port serves /healthz and /readyz)\n"};
  };
}

HttpHandler MakeApiHandler(App& app) {
  App* a = &app;
  return [a](const HttpRequest& req) -> HttpResponse {
    if (req.path == "/metrics") return Metrics(*a);
    if (req.path == "/api/v1/results" || req.path == "/api/v1/fingerprints") {
      HttpResponse r = a->results->Handle(req);
      a->metrics.CountResultsRequest(r.code);
      return r;
    }
    return {404, "text/plain", "not found\n"};
  };
}

}  // namespace ccltune::controller

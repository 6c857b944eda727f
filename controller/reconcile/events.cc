#include "controller/reconcile/events.h"

#include <random>

#include "controller/kube/kube_client.h"
#include "controller/kube/kube_paths.h"
#include "core/base/log.h"

namespace ccltune::controller {

void RecordEvent(ReconcilerDeps& deps, const JobContext& ctx, bool warning,
                 const std::string& reason, const std::string& message) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char suffix[20];
  snprintf(suffix, sizeof(suffix), "%016llx", static_cast<unsigned long long>(rng()));
  std::string now = FormatTime(ctx.now);
  nlohmann::json event = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", ctx.name() + "." + suffix}, {"namespace", ctx.ns()}}},
      {"involvedObject",
       {{"apiVersion", "ccltune.io/v1alpha1"},
        {"kind", "CollectiveTuningJob"},
        {"name", ctx.name()},
        {"namespace", ctx.ns()},
        {"uid", ctx.uid()},
        {"resourceVersion", ctx.job["metadata"].value("resourceVersion", "")}}},
      {"reason", reason},
      {"message", message.substr(0, 1024)},
      {"type", warning ? "Warning" : "Normal"},
      {"source", {{"component", "ccltune-controller"}}},
      {"reportingComponent", "ccltune-controller"},
      {"firstTimestamp", now},
      {"lastTimestamp", now},
      {"count", 1}};
  auto r = deps.kube.Create(EventsPath(ctx.ns()), event);
  if (!r.ok())
    core::LogDebug("event " + reason + " on " + ctx.name() + ": " + r.status().ToString());
}

}  // namespace ccltune::controller

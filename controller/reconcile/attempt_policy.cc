// Attempt policy: the plan ConfigMap and every pod of the current attempt are created in
// one pass (gang scheduling is the scheduler's job; a partial gang would only deadlock in
// rendezvous). Creation is idempotent: names are deterministic and AlreadyExists means the
// object is adopted, so a restarted controller never duplicates pods. Once an attempt's
// pods are recorded in status.pods.total, a missing pod is a failure, not a gap to refill.
#include <set>

#include "controller/kube/kube_client.h"
#include "controller/kube/kube_paths.h"
#include "controller/reconcile/events.h"
#include "controller/reconcile/pod_builder.h"
#include "controller/reconcile/policies.h"
#include "core/base/log.h"

namespace ccltune::controller {
namespace {

using Json = nlohmann::json;

core::Status EnsurePlanConfigMap(ReconcilerDeps& deps, JobContext& ctx) {
  auto created = deps.kube.Create(ConfigMapsPath(ctx.ns()), BuildPlanConfigMap(ctx));
  if (created.ok() || !IsAlreadyExists(created.status())) return created.status();
  CCLTUNE_ASSIGN_OR_RETURN(Json cm,
                           deps.kube.Get(ConfigMapPath(ctx.ns(), PlanConfigMapName(ctx.name()))));
  for (const Json& ref : cm["metadata"].value("ownerReferences", Json::array())) {
    if (ref.value("uid", "") == ctx.uid()) return core::Status::Ok();
  }
  // A predecessor job of the same name owns it; the garbage collector will remove it.
  return core::FailedPrecondition("ConfigMap " + PlanConfigMapName(ctx.name()) +
                                  " belongs to another job; waiting for its deletion");
}

core::Status CreateMissingPods(ReconcilerDeps& deps, JobContext& ctx, int attempt) {
  std::set<std::string> existing;
  for (const Json& pod : AttemptPods(ctx, attempt)) existing.insert(pod["metadata"]["name"]);
  for (int i = 0; i < ctx.spec.pods(); ++i) {
    if (existing.count(PodName(ctx.name(), attempt, i))) continue;
    auto created =
        deps.kube.Create(PodsPath(ctx.ns()), BuildPod(ctx, deps.ccltune_command, attempt, i));
    if (created.ok()) {
      ctx.pods.push_back(*created);
    } else if (!IsAlreadyExists(created.status())) {
      return created.status();
    }
  }
  return core::Status::Ok();
}

}  // namespace

core::Result<Step> EnsureAttemptPods(ReconcilerDeps& deps, JobContext& ctx) {
  CCLTUNE_RETURN_IF_ERROR(ListJobPods(deps, ctx));
  int attempt = ctx.attempt();
  int expected = ctx.spec.pods();
  // Pods already made for this attempt: a spec edited since then applies to the next attempt
  // (one attempt never mixes pods of two specs).
  if (ctx.status.value("pods", Json::object()).value("total", 0) != 0) return Step::kContinue;
  CCLTUNE_RETURN_IF_ERROR(EnsurePlanConfigMap(deps, ctx));
  CCLTUNE_RETURN_IF_ERROR(CreateMissingPods(deps, ctx, attempt));
  core::LogInfo("job " + ctx.ns() + "/" + ctx.name() + ": attempt " + std::to_string(attempt) +
                " has its " + std::to_string(expected) + " pods");
  RecordEvent(deps, ctx, false, "AttemptStarted",
              "attempt " + std::to_string(attempt) + ": " + std::to_string(expected) + " pods");
  ctx.status["attempt"] = attempt;
  ctx.status["pods"] = {
      {"total", expected}, {"pending", expected}, {"running", 0}, {"succeeded", 0}, {"failed", 0}};
  if (!ctx.status.contains("startTime")) ctx.status["startTime"] = FormatTime(ctx.now);
  if (ctx.status.value("phase", "") != "Running") ctx.status["phase"] = "Pending";
  return Step::kContinue;
}

}  // namespace ccltune::controller

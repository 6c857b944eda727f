// Suspend policy (Kueue-friendly): a suspended job has no pods. Pods of an interrupted
// attempt are deleted and the attempt number moves on, because that attempt's Redis
// rendezvous state is stale; startTime is cleared so activeDeadlineSeconds counts from the
// resume, as for Kubernetes Jobs. A suspension is not a failure: backoff is not charged.
#include "controller/job/conditions.h"
#include "controller/reconcile/policies.h"

namespace ccltune::controller {

core::Result<Step> Suspend(ReconcilerDeps& deps, JobContext& ctx) {
  if (!ctx.spec.suspend) {
    if (ctx.status.value("phase", "") == "Suspended") ctx.status["phase"] = "Pending";
    return Step::kContinue;
  }
  CCLTUNE_RETURN_IF_ERROR(ListJobPods(deps, ctx));
  CCLTUNE_RETURN_IF_ERROR(DeleteJobPods(deps, ctx));
  int total = ctx.status.value("pods", nlohmann::json::object()).value("total", 0);
  if (total > 0) ctx.status["attempt"] = ctx.attempt() + 1;
  ctx.status["pods"] = {
      {"total", 0}, {"pending", 0}, {"running", 0}, {"succeeded", 0}, {"failed", 0}};
  ctx.status.erase("startTime");
  ctx.status["phase"] = "Suspended";
  return Step::kStop;
}

}  // namespace ccltune::controller

// Failure policy: one failed (or vanished) pod fails its whole attempt — the ranks are one
// communicator. The attempt's pods are deleted and, within backoffLimit, the next attempt
// starts with fresh pod names and fresh Redis keys; otherwise the job fails with the first
// failed pod's message.
#include "controller/job/conditions.h"
#include "controller/reconcile/events.h"
#include "controller/reconcile/pod_failure.h"
#include "controller/reconcile/policies.h"
#include "core/base/log.h"

namespace ccltune::controller {
namespace {

using Json = nlohmann::json;

// Empty when the attempt has not failed.
std::string AttemptFailure(const JobContext& ctx, const std::vector<Json>& pods) {
  for (const Json& pod : pods) {
    if (PodPhase(pod) == "Failed") return PodFailureMessage(pod);
  }
  int total = ctx.status.value("pods", Json::object()).value("total", 0);
  int alive = 0;
  for (const Json& pod : pods) {
    if (!pod["metadata"].contains("deletionTimestamp")) ++alive;
  }
  if (alive < total) {
    return std::to_string(total - alive) + " pod(s) of attempt " + std::to_string(ctx.attempt()) +
           " were deleted";
  }
  return "";
}

}  // namespace

core::Result<Step> HandleAttemptFailure(ReconcilerDeps& deps, JobContext& ctx) {
  std::vector<Json> pods = AttemptPods(ctx, ctx.attempt());
  std::string why = AttemptFailure(ctx, pods);
  if (why.empty()) return Step::kContinue;
  CCLTUNE_RETURN_IF_ERROR(DeleteJobPods(deps, ctx));
  int failures = ctx.status.value("failures", 0) + 1;
  ctx.status["failures"] = failures;
  core::LogInfo("job " + ctx.ns() + "/" + ctx.name() + ": attempt " +
                std::to_string(ctx.attempt()) + " failed: " + why);
  RecordEvent(deps, ctx, true, "AttemptFailed",
              "attempt " + std::to_string(ctx.attempt()) + ": " + why);
  if (failures > ctx.spec.backoff_limit) {
    MarkFailed(ctx.status, "BackoffLimitExceeded",
               std::to_string(failures) + " attempt(s) failed (backoffLimit " +
                   std::to_string(ctx.spec.backoff_limit) + "); last: " + why,
               ctx.generation(), ctx.now);
    return Step::kStop;
  }
  ctx.status["attempt"] = ctx.attempt() + 1;
  ctx.status["pods"] = {
      {"total", 0}, {"pending", 0}, {"running", 0}, {"succeeded", 0}, {"failed", 0}};
  ctx.status["phase"] = "Pending";
  SetCondition(ctx.status, "Failed", false, "AttemptFailed",
               "attempt " + std::to_string(ctx.attempt() - 1) + " failed, retrying: " + why,
               ctx.generation(), ctx.now);
  // The status write records the new attempt before its pods exist; the next pass creates them.
  ctx.RequeueAfter(std::chrono::milliseconds(0));
  return Step::kStop;
}

}  // namespace ccltune::controller

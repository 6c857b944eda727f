// TTL-after-finished policy: a finished job is deleted ttlSecondsAfterFinished after its
// completionTime (the owner cascade takes its pods and ConfigMap). The controller requeues
// for the exact remaining time instead of waiting for a resync.
#include "controller/job/conditions.h"
#include "controller/kube/kube_client.h"
#include "controller/kube/kube_paths.h"
#include "controller/reconcile/policies.h"
#include "core/base/log.h"

namespace ccltune::controller {

core::Result<Step> TtlAfterFinished(ReconcilerDeps& deps, JobContext& ctx) {
  if (!IsFinished(ctx.status)) return Step::kContinue;
  if (!ctx.spec.ttl_seconds_after_finished) return Step::kStop;
  auto done = ParseTime(ctx.status.value("completionTime", "")).value_or(ctx.now);
  auto expiry = done + std::chrono::seconds(*ctx.spec.ttl_seconds_after_finished);
  if (expiry > ctx.now) {
    ctx.RequeueAfter(std::chrono::duration_cast<std::chrono::milliseconds>(expiry - ctx.now) +
                     std::chrono::milliseconds(100));
    return Step::kStop;
  }
  core::LogInfo("job " + ctx.ns() + "/" + ctx.name() + ": TTL after finished expired, deleting");
  core::Status s = deps.kube.Delete(JobPath(ctx.ns(), ctx.name()));
  if (!s.ok() && !IsNotFound(s)) return s;
  return Step::kStop;
}

}  // namespace ccltune::controller

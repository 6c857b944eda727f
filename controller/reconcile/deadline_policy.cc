// Active-deadline policy: activeDeadlineSeconds counts from startTime across all attempts
// (like a Kubernetes Job). It is what ends a job whose pods never schedule.
#include "controller/job/conditions.h"
#include "controller/reconcile/events.h"
#include "controller/reconcile/policies.h"

namespace ccltune::controller {

core::Result<Step> ActiveDeadline(ReconcilerDeps& deps, JobContext& ctx) {
  if (!ctx.spec.active_deadline_seconds) return Step::kContinue;
  auto start = ParseTime(ctx.status.value("startTime", ""));
  if (!start) return Step::kContinue;
  auto deadline = *start + std::chrono::seconds(*ctx.spec.active_deadline_seconds);
  if (deadline > ctx.now) {
    ctx.RequeueAfter(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - ctx.now) +
                     std::chrono::milliseconds(100));
    return Step::kContinue;
  }
  CCLTUNE_RETURN_IF_ERROR(ListJobPods(deps, ctx));
  CCLTUNE_RETURN_IF_ERROR(DeleteJobPods(deps, ctx));
  MarkFailed(ctx.status, "DeadlineExceeded",
             "the job was active longer than activeDeadlineSeconds (" +
                 std::to_string(*ctx.spec.active_deadline_seconds) + " s)",
             ctx.generation(), ctx.now);
  RecordEvent(deps, ctx, true, "DeadlineExceeded", "activeDeadlineSeconds passed; pods deleted");
  return Step::kStop;
}

}  // namespace ccltune::controller

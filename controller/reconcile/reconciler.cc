#include "controller/reconcile/reconciler.h"

#include "controller/kube/kube_client.h"
#include "controller/kube/kube_paths.h"
#include "controller/metrics/metrics.h"
#include "controller/reconcile/policies.h"
#include "controller/reconcile/status_writer.h"

namespace ccltune::controller {

core::Result<ReconcileResult> JobReconciler::Reconcile(const std::string& key) {
  auto slash = key.find('/');
  std::string ns = key.substr(0, slash), name = key.substr(slash + 1);
  auto job = deps_.kube.Get(JobPath(ns, name));
  if (!job.ok()) {
    if (!IsNotFound(job.status())) return job.status();
    deps_.metrics.ForgetJob(ns, name);
    return ReconcileResult{};  // deleted: the owner cascade and the finalizer did the rest
  }
  JobContext ctx;
  ctx.job = std::move(job).value();
  ctx.status = ctx.job.value("status", nlohmann::json::object());
  if (ctx.job["metadata"].contains("deletionTimestamp")) {
    CCLTUNE_RETURN_IF_ERROR(FinalizeDeletedJob(deps_, ctx));
    return ReconcileResult{ctx.requeue_after};  // set while a cleanup is being retried
  }
  core::Status steps = reconcile(ctx);
  // Whatever the steps decided before an error is still written: it happened (pods exist).
  core::Status written = WriteStatus(deps_.kube, ctx.job, ctx.status);
  CCLTUNE_RETURN_IF_ERROR(steps);
  CCLTUNE_RETURN_IF_ERROR(written);
  return ReconcileResult{ctx.requeue_after};
}

core::Status JobReconciler::reconcile(JobContext& ctx) {
  using StepFn = core::Result<Step> (*)(ReconcilerDeps&, JobContext&);
  static constexpr StepFn kSteps[] = {
      EnsureFinalizer,       // Redis cleanup must be able to run before deletion
      ValidateSpec,          // Validated=False stops here
      TtlAfterFinished,      // finished jobs stop here
      Suspend,               // suspended jobs have no pods
      ActiveDeadline,        // Failed(DeadlineExceeded) stops here
      EnsureAttemptPods,     // ConfigMap + every pod of the attempt, adopted or created
      TrackProgress,         // counts, PodsScheduled, Rendezvoused, Benchmarking, phase
      HandleAttemptFailure,  // next attempt or Failed(BackoffLimitExceeded)
      HandleAttemptSuccess,  // results from Redis, Succeeded
  };
  for (StepFn step : kSteps) {
    CCLTUNE_ASSIGN_OR_RETURN(Step next, step(deps_, ctx));
    if (next == Step::kStop) break;
  }
  return core::Status::Ok();
}

}  // namespace ccltune::controller

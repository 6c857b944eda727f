// Success policy: when every pod of the attempt succeeded, the winners are read from the
// attempt summary in Redis into status. A missing summary after exit 0 breaks the worker
// contract, so the job fails (ResultsMissing) instead of claiming results it does not have;
// an unreachable Redis is retried with back-off.
#include "controller/cache/job_redis.h"
#include "controller/cache/results_summary.h"
#include "controller/job/conditions.h"
#include "controller/metrics/metrics.h"
#include "controller/reconcile/events.h"
#include "controller/reconcile/job_password.h"
#include "controller/reconcile/policies.h"
#include "core/base/log.h"

namespace ccltune::controller {
namespace {

using Json = nlohmann::json;

void RecordMetrics(ReconcilerDeps& deps, JobContext& ctx) {
  auto start = ParseTime(ctx.status.value("startTime", ""));
  if (start) {
    deps.metrics.ObserveJobDuration(std::chrono::duration<double>(ctx.now - *start).count());
  }
  double wait_ms = ctx.status["preSync"].value("waitMs", 0.0);
  deps.metrics.SetJobPreSyncWait(ctx.ns(), ctx.name(), wait_ms / 1000.0);
}

}  // namespace

core::Result<Step> HandleAttemptSuccess(ReconcilerDeps& deps, JobContext& ctx) {
  std::vector<Json> pods = AttemptPods(ctx, ctx.attempt());
  int total = ctx.status.value("pods", Json::object()).value("total", 0);
  int succeeded = 0;
  for (const Json& pod : pods) succeeded += PodPhase(pod) == "Succeeded";
  if (total == 0 || succeeded < total) return Step::kContinue;
  auto password = JobRedisPassword(deps, ctx.ns(), ctx.spec.password_ref);
  if (!password.ok() && password.status().code() != core::StatusCode::kFailedPrecondition) {
    return password.status();  // the API server: retried
  }
  auto summary = password.ok() ? deps.redis.ReadSummary(ctx.spec.redis_url, *password, ctx.uid(),
                                                        ctx.attempt())
                               : core::Result<Json>(password.status());
  // NotFound, DataLoss (the worker broke its contract) and an unusable Secret are final;
  // the rest is retried.
  if (!summary.ok() && summary.status().code() != core::StatusCode::kNotFound &&
      summary.status().code() != core::StatusCode::kDataLoss &&
      summary.status().code() != core::StatusCode::kFailedPrecondition) {
    return summary.status();
  }
  core::Status filled = summary.ok() ? FillResults(ctx.status, *summary) : summary.status();
  if (!filled.ok()) {
    const bool unreadable = filled.code() == core::StatusCode::kFailedPrecondition;
    MarkFailed(ctx.status, unreadable ? "ResultsUnreadable" : "ResultsMissing",
               "every pod succeeded but attempt " + std::to_string(ctx.attempt()) +
                   " left no usable summary: " + filled.message(),
               ctx.generation(), ctx.now);
    return Step::kStop;
  }
  ctx.status["phase"] = "Succeeded";
  ctx.status["completionTime"] = FormatTime(ctx.now);
  const Json& results = ctx.status["results"];
  SetCondition(ctx.status, "Complete", true, "AllPodsSucceeded",
               std::to_string(results.value("problems", 0)) + " problems tuned, " +
                   std::to_string(results.value("published", 0)) + " published",
               ctx.generation(), ctx.now);
  SetCondition(ctx.status, "Failed", false, "AllPodsSucceeded", "", ctx.generation(), ctx.now);
  // A fast attempt may finish between two polls: close the progress conditions explicitly.
  SetCondition(ctx.status, "Rendezvoused", true, "AllRanksJoined", "every rank joined",
               ctx.generation(), ctx.now);
  SetCondition(ctx.status, "Benchmarking", false, "Completed", "benchmarking finished",
               ctx.generation(), ctx.now);
  RecordMetrics(deps, ctx);
  RecordEvent(deps, ctx, false, "Succeeded",
              FindCondition(ctx.status, "Complete")->value("message", ""));
  core::LogInfo("job " + ctx.ns() + "/" + ctx.name() + " succeeded");
  return Step::kStop;
}

}  // namespace ccltune::controller

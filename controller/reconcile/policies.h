// The reconcile steps, one file per policy (jobset's layout): each reads the JobContext,
// edits its desired status, may create or delete objects, and says whether the remaining
// steps still run. Errors mean "retry with back-off"; user errors never come back as
// errors, they become conditions.
#pragma once

#include "controller/job/job_context.h"
#include "controller/reconcile/reconciler_deps.h"
#include "core/base/status.h"

namespace ccltune::controller {

enum class Step { kContinue, kStop };

// finalizer_policy.cc
core::Result<Step> EnsureFinalizer(ReconcilerDeps& deps, JobContext& ctx);
// Runs for a job being deleted: its controller series go, Redis and Pushgateway cleanup
// (each bounded), then the finalizer goes. A cleanup still being retried leaves the finalizer
// and sets ctx.requeue_after.
core::Status FinalizeDeletedJob(ReconcilerDeps& deps, JobContext& ctx);
// push_cleanup_policy.cc: deletes the job's Pushgateway groups; false while a failed delete is
// still being retried (ctx.requeue_after set), true once done or given up.
bool CleanupPushGroups(ReconcilerDeps& deps, JobContext& ctx);
// validation_policy.cc
core::Result<Step> ValidateSpec(ReconcilerDeps& deps, JobContext& ctx);
// ttl_policy.cc: finished jobs stop here (deleted after ttlSecondsAfterFinished).
core::Result<Step> TtlAfterFinished(ReconcilerDeps& deps, JobContext& ctx);
// suspend_policy.cc
core::Result<Step> Suspend(ReconcilerDeps& deps, JobContext& ctx);
// deadline_policy.cc
core::Result<Step> ActiveDeadline(ReconcilerDeps& deps, JobContext& ctx);
// attempt_policy.cc: ConfigMap + all pods of the current attempt.
core::Result<Step> EnsureAttemptPods(ReconcilerDeps& deps, JobContext& ctx);
// failure_policy.cc: a failed or vanished pod fails the attempt; retry or give up.
core::Result<Step> HandleAttemptFailure(ReconcilerDeps& deps, JobContext& ctx);
// success_policy.cc: every pod succeeded -> results from Redis -> Succeeded.
core::Result<Step> HandleAttemptSuccess(ReconcilerDeps& deps, JobContext& ctx);
// progress_policy.cc: pod counts, PodsScheduled/Rendezvoused/Benchmarking, phase.
core::Result<Step> TrackProgress(ReconcilerDeps& deps, JobContext& ctx);

// pods.cc: helpers shared by the policies.
core::Status ListJobPods(ReconcilerDeps& deps, JobContext& ctx);
std::vector<nlohmann::json> AttemptPods(const JobContext& ctx, int attempt);
// Deletes every pod of the job (all attempts); NotFound is fine.
core::Status DeleteJobPods(ReconcilerDeps& deps, JobContext& ctx);
std::string PodPhase(const nlohmann::json& pod);

}  // namespace ccltune::controller

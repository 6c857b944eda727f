// Finalizer policy: the job's rendezvous keys live in Redis and its ranks' figures on a
// Pushgateway, outside the owner-reference garbage collector's reach, so deletion waits until
// they are gone (bounded: after kCleanupGiveUp a dead Redis no longer blocks deletion, the
// keys' own TTL remains; the Pushgateway's bound is push_cleanup_policy.cc's).
#include <algorithm>

#include "controller/cache/job_redis.h"
#include "controller/kube/kube_client.h"
#include "controller/kube/kube_paths.h"
#include "controller/metrics/metrics.h"
#include "controller/reconcile/job_password.h"
#include "controller/reconcile/policies.h"
#include "core/base/log.h"

namespace ccltune::controller {
namespace {

using Json = nlohmann::json;
constexpr auto kCleanupGiveUp = std::chrono::minutes(5);

bool HasFinalizer(const Json& job) {
  for (const Json& f : job["metadata"].value("finalizers", Json::array())) {
    if (f == kFinalizer) return true;
  }
  return false;
}

std::string RedisUrlOf(const ReconcilerDeps& deps, const Json& job) {
  const Json& spec = job.value("spec", Json::object());
  const Json& cache = spec.value("cache", Json::object());
  if (cache.is_object() && cache.value("redisURL", Json()).is_string()) {
    return cache["redisURL"].get<std::string>();
  }
  return deps.defaults.redis_url;
}

core::Status CleanupRedis(ReconcilerDeps& deps, JobContext& ctx) {
  auto password = JobRedisPassword(deps, ctx.ns(), PasswordRefOf(deps, ctx.job));
  auto deleted = password.ok()
                     ? deps.redis.DeleteJobKeys(RedisUrlOf(deps, ctx.job), *password, ctx.uid())
                     : core::Result<long long>(password.status());
  if (deleted.ok()) {
    core::LogInfo("job " + ctx.ns() + "/" + ctx.name() + ": deleted " + std::to_string(*deleted) +
                  " Redis keys");
    return core::Status::Ok();
  }
  auto since = ParseTime(ctx.job["metadata"].value("deletionTimestamp", ""));
  if (since && ctx.now - *since > kCleanupGiveUp) {
    core::LogWarn("job " + ctx.ns() + "/" + ctx.name() +
                  ": giving up Redis cleanup: " + deleted.status().ToString());
    return core::Status::Ok();
  }
  return deleted.status().WithContext("finalizer cleanup");
}

}  // namespace

core::Result<Step> EnsureFinalizer(ReconcilerDeps& deps, JobContext& ctx) {
  if (HasFinalizer(ctx.job)) return Step::kContinue;
  Json updated = ctx.job;
  if (!updated["metadata"].contains("finalizers"))
    updated["metadata"]["finalizers"] = Json::array();
  updated["metadata"]["finalizers"].push_back(kFinalizer);
  CCLTUNE_ASSIGN_OR_RETURN(ctx.job, deps.kube.Update(JobPath(ctx.ns(), ctx.name()), updated));
  return Step::kContinue;
}

core::Status FinalizeDeletedJob(ReconcilerDeps& deps, JobContext& ctx) {
  // A job being deleted has no pre-sync wait to show any more, finalizer or not.
  deps.metrics.ForgetJob(ctx.ns(), ctx.name());
  if (!HasFinalizer(ctx.job)) return core::Status::Ok();
  CCLTUNE_RETURN_IF_ERROR(CleanupRedis(deps, ctx));
  if (!CleanupPushGroups(deps, ctx)) return core::Status::Ok();  // requeued: the finalizer stays
  Json job = ctx.job;
  for (int tries = 0; tries < 5; ++tries) {
    auto& fins = job["metadata"]["finalizers"];
    fins.erase(std::remove(fins.begin(), fins.end(), Json(kFinalizer)), fins.end());
    auto r = deps.kube.Update(JobPath(ctx.ns(), ctx.name()), job);
    if (r.ok() || IsNotFound(r.status())) return core::Status::Ok();
    if (!IsConflict(r.status())) return r.status();
    CCLTUNE_ASSIGN_OR_RETURN(job, deps.kube.Get(JobPath(ctx.ns(), ctx.name())));
    if (!HasFinalizer(job)) return core::Status::Ok();
  }
  return core::Aborted("finalizer removal: too many conflicts");
}

}  // namespace ccltune::controller

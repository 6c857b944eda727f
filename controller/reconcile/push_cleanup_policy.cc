// Pushgateway cleanup of a deleted job: its ranks pushed their figures to groups that the
// Pushgateway keeps until someone deletes them, outside the owner-reference garbage
// collector's reach, so the finalizer deletes them too. A Pushgateway that cannot be reached
// is retried with back-off and logged once; after deps.push_cleanup_give_up from the
// deletionTimestamp it no longer holds up the deletion (the groups then stay).
#include <algorithm>

#include "controller/job/pushgateway_url.h"
#include "controller/metrics/push_groups.h"
#include "controller/reconcile/policies.h"
#include "core/base/log.h"

namespace ccltune::controller {
namespace {

using Json = nlohmann::json;
using std::chrono::milliseconds;

// Where the job's pods pushed: its spec.metrics.pushgateway, else the controller's default;
// world size = ranks = groups. Read from the raw spec: a job is deleted whatever its spec.
struct PushTarget {
  std::string url;
  int ranks = 0;
};

PushTarget PushTargetOf(const ReconcilerDeps& deps, const Json& job) {
  const Json spec = job.value("spec", Json::object());
  if (!spec.is_object()) return {};
  PushTarget t{deps.defaults.pushgateway, 0};
  const Json metrics = spec.value("metrics", Json::object());
  if (metrics.is_object() && metrics.value("pushgateway", Json()).is_string()) {
    t.url = metrics["pushgateway"].get<std::string>();
  }
  const Json world = spec.value("worldSize", Json());
  if (world.is_number_integer())
    t.ranks = static_cast<int>(std::clamp(world.get<long long>(), 0LL, 4096LL));
  // Pods only ever got a URL that passes the check: any other was never pushed to.
  if (t.url.empty() || !CheckPushgatewayUrl(t.url, "").ok()) return {};
  return t;
}

std::string JobName(const JobContext& ctx) { return "job " + ctx.ns() + "/" + ctx.name(); }

// 1 s, 2 s, 4 s … 30 s, and no later than the give-up time (that pass gives up).
milliseconds RetryDelay(int failures, milliseconds left) {
  const milliseconds backoff = std::chrono::seconds(1 << std::min(failures - 1, 5));
  return std::max(std::min({backoff, milliseconds(30000), left}), milliseconds(100));
}

}  // namespace

bool CleanupPushGroups(ReconcilerDeps& deps, JobContext& ctx) {
  const PushTarget target = PushTargetOf(deps, ctx.job);
  if (target.ranks == 0) return true;
  core::Status st = deps.push_groups.Delete(PushgatewayBase(target.url), ctx.uid(), target.ranks);
  if (st.ok()) {
    deps.push_groups.Forget(ctx.uid());
    core::LogInfo(JobName(ctx) + ": deleted its " + std::to_string(target.ranks) +
                  " Pushgateway group(s) at " + target.url);
    return true;
  }
  const int failures = deps.push_groups.CountFailure(ctx.uid());
  auto since = ParseTime(ctx.job["metadata"].value("deletionTimestamp", ""));
  const auto left =
      since ? std::chrono::duration_cast<milliseconds>(*since + deps.push_cleanup_give_up - ctx.now)
            : milliseconds(0);
  if (left <= milliseconds(0)) {
    deps.push_groups.Forget(ctx.uid());
    core::LogWarn(JobName(ctx) + ": giving up deleting its Pushgateway groups after " +
                  std::to_string(failures) +
                  " attempt(s); they stay until deleted by hand: " + st.ToString());
    return true;
  }
  if (failures == 1) {
    core::LogWarn(JobName(ctx) + ": deleting its Pushgateway groups failed; retrying for " +
                  std::to_string(left.count() / 1000) + " s more: " + st.ToString());
  }
  ctx.RequeueAfter(RetryDelay(failures, left));
  return false;
}

}  // namespace ccltune::controller

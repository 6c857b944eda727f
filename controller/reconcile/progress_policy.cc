// Progress policy: pod counts of the current attempt, PodsScheduled, and (while all pods
// run) Rendezvoused/Benchmarking from the attempt's Redis keys. Redis progress creates no
// Kubernetes events, so a running job is re-examined every kPollRunning.
#include "controller/cache/job_redis.h"
#include "controller/job/conditions.h"
#include "controller/reconcile/job_password.h"
#include "controller/reconcile/policies.h"

namespace ccltune::controller {
namespace {

using Json = nlohmann::json;
constexpr auto kPollRunning = std::chrono::seconds(3);

void Count(JobContext& ctx, const std::vector<Json>& pods, int* running, bool* scheduled) {
  int pending = 0, succeeded = 0, failed = 0;
  *running = 0;
  *scheduled = !pods.empty();
  for (const Json& pod : pods) {
    std::string phase = PodPhase(pod);
    if (phase == "Running")
      ++*running;
    else if (phase == "Succeeded")
      ++succeeded;
    else if (phase == "Failed")
      ++failed;
    else
      ++pending;
    if (pod.value("spec", Json::object()).value("nodeName", "").empty()) *scheduled = false;
  }
  int total = ctx.status.value("pods", Json::object()).value("total", 0);
  ctx.status["pods"] = {{"total", total},
                        {"pending", pending},
                        {"running", *running},
                        {"succeeded", succeeded},
                        {"failed", failed}};
}

void RedisProgress(ReconcilerDeps& deps, JobContext& ctx) {
  auto password = JobRedisPassword(deps, ctx.ns(), ctx.spec.password_ref);
  if (!password.ok()) return;  // informational only; the success step reports it
  auto p = deps.redis.Progress(ctx.spec.redis_url, *password, ctx.uid(), ctx.attempt());
  if (!p.ok()) return;  // informational only; the pods' phases decide the outcome
  long long world = ctx.spec.world_size;
  SetCondition(ctx.status, "Rendezvoused", p->joined >= world,
               p->joined >= world ? "AllRanksJoined" : "Joining",
               std::to_string(p->joined) + "/" + std::to_string(world) + " ranks joined",
               ctx.generation(), ctx.now);
  SetCondition(ctx.status, "Benchmarking", p->presync >= world,
               p->presync >= world ? "PreSyncPassed" : "WaitingForPreSync",
               std::to_string(p->presync) + "/" + std::to_string(world) +
                   " ranks passed the pre-sync window",
               ctx.generation(), ctx.now);
}

// The scheduler's own explanation ("0/2 nodes are available: ...") of an unplaced pod.
std::string UnschedulableMessage(const std::vector<Json>& pods) {
  for (const Json& pod : pods) {
    for (const Json& c : pod.value("status", Json::object()).value("conditions", Json::array())) {
      if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False") {
        return "pod " + pod["metadata"].value("name", "") + ": " + c.value("message", "");
      }
    }
  }
  return "waiting for the scheduler to place every pod";
}

}  // namespace

core::Result<Step> TrackProgress(ReconcilerDeps& deps, JobContext& ctx) {
  std::vector<Json> pods = AttemptPods(ctx, ctx.attempt());
  int running = 0;
  bool scheduled = false;
  Count(ctx, pods, &running, &scheduled);
  SetCondition(ctx.status, "PodsScheduled", scheduled, scheduled ? "Scheduled" : "Unschedulable",
               scheduled
                   ? "every pod of attempt " + std::to_string(ctx.attempt()) + " is bound to a node"
                   : UnschedulableMessage(pods),
               ctx.generation(), ctx.now);
  if (running > 0) ctx.status["phase"] = "Running";
  if (running == ctx.spec.pods()) {
    RedisProgress(deps, ctx);
    ctx.RequeueAfter(kPollRunning);
  }
  return Step::kContinue;
}

}  // namespace ccltune::controller

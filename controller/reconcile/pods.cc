// Pod helpers shared by the policies: which pods belong to the job (label + owner uid, so a
// re-created job of the same name never adopts its predecessor's pods); why one failed is
// pod_failure.cc.
#include <set>

#include "controller/kube/kube_client.h"
#include "controller/kube/kube_paths.h"
#include "controller/reconcile/policies.h"

namespace ccltune::controller {

using Json = nlohmann::json;

core::Status ListJobPods(ReconcilerDeps& deps, JobContext& ctx) {
  std::string path = PodsPath(ctx.ns()) +
                     "?labelSelector=" + QueryEscape(std::string(kJobLabel) + "=" + ctx.name());
  CCLTUNE_ASSIGN_OR_RETURN(Json list, deps.kube.Get(path));
  ctx.pods.clear();
  for (const Json& pod : list.value("items", Json::array())) {
    for (const Json& ref : pod["metadata"].value("ownerReferences", Json::array())) {
      if (ref.value("uid", "") == ctx.uid()) {
        ctx.pods.push_back(pod);
        break;
      }
    }
  }
  return core::Status::Ok();
}

std::vector<Json> AttemptPods(const JobContext& ctx, int attempt) {
  std::vector<Json> out;
  for (const Json& pod : ctx.pods) {
    const Json& labels = pod["metadata"].value("labels", Json::object());
    if (labels.value(kAttemptLabel, "") == std::to_string(attempt)) out.push_back(pod);
  }
  return out;
}

core::Status DeleteJobPods(ReconcilerDeps& deps, JobContext& ctx) {
  for (const Json& pod : ctx.pods) {
    if (pod["metadata"].contains("deletionTimestamp")) continue;
    core::Status s = deps.kube.Delete(PodPath(ctx.ns(), pod["metadata"].value("name", "")));
    if (!s.ok() && !IsNotFound(s)) return s;
  }
  return core::Status::Ok();
}

std::string PodPhase(const Json& pod) {
  return pod.value("status", Json::object()).value("phase", "Pending");
}

}  // namespace ccltune::controller

// Pod helpers shared by the policies: which pods belong to the job (label + owner uid, so a
// re-created job of the same name never adopts its predecessor's pods) and why one failed.
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

std::string PodFailureMessage(const Json& pod) {
  const Json& st = pod.value("status", Json::object());
  std::string name = pod["metadata"].value("name", "");
  std::string msg = st.value("message", "");
  for (const Json& cs : st.value("containerStatuses", Json::array())) {
    const Json& term = cs.value("state", Json::object()).value("terminated", Json::object());
    if (term.empty()) continue;
    std::string detail = "exit code " + std::to_string(term.value("exitCode", -1));
    if (!term.value("reason", "").empty()) detail += " (" + term.value("reason", "") + ")";
    if (!term.value("message", "").empty()) detail += ": " + term.value("message", "");
    msg = msg.empty() ? detail : msg + "; " + detail;
  }
  return "pod " + name + " failed" + (msg.empty() ? "" : ": " + msg);
}

}  // namespace ccltune::controller

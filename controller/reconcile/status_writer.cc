#include "controller/reconcile/status_writer.h"

#include "controller/kube/kube_paths.h"

namespace ccltune::controller {

using Json = nlohmann::json;

core::Status WriteStatus(KubeClient& kube, const Json& job, const Json& desired_status) {
  Json desired = desired_status;
  desired["observedGeneration"] = job["metadata"].value("generation", 0LL);
  if (job.value("status", Json::object()) == desired) return core::Status::Ok();
  const std::string ns = job["metadata"].value("namespace", "");
  const std::string name = job["metadata"].value("name", "");
  Json obj = job;
  constexpr int kMaxConflicts = 5;
  for (int i = 0; i < kMaxConflicts; ++i) {
    obj["status"] = desired;
    auto r = kube.Update(JobStatusPath(ns, name), obj);
    if (r.ok() || IsNotFound(r.status())) return core::Status::Ok();
    if (!IsConflict(r.status())) return r.status();
    CCLTUNE_ASSIGN_OR_RETURN(obj, kube.Get(JobPath(ns, name)));
    // A spec change since our GET: write what we decided, but under the generation we saw,
    // so the next pass (queued by the watch event) re-decides for the new spec.
  }
  return core::Aborted("status write of " + ns + "/" + name + ": conflicts persisted");
}

}  // namespace ccltune::controller

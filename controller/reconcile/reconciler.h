// JobReconciler: brings one CollectiveTuningJob to its desired state. Reconcile is the short
// outer shell (get, deleting?, reconcile steps, one status write); reconcile() is a linear
// list of policy steps (policies.h), each in its own file.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "controller/job/job_context.h"
#include "controller/reconcile/reconciler_deps.h"
#include "core/base/status.h"

namespace ccltune::controller {

struct ReconcileResult {
  std::optional<std::chrono::milliseconds> requeue_after;
};

class JobReconciler {
 public:
  explicit JobReconciler(ReconcilerDeps deps) : deps_(std::move(deps)) {}
  // `key` is "namespace/name". An error asks the caller to retry with back-off.
  core::Result<ReconcileResult> Reconcile(const std::string& key);

 private:
  core::Status reconcile(JobContext& ctx);

  ReconcilerDeps deps_;
};

}  // namespace ccltune::controller

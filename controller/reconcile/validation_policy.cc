// Validation policy: a bad spec is the user's to fix, so it becomes Validated=False with a
// message naming the field and the job waits (phase Pending) for a corrected generation.
#include "controller/job/conditions.h"
#include "controller/reconcile/events.h"
#include "controller/reconcile/policies.h"
#include "core/base/log.h"

namespace ccltune::controller {

core::Result<Step> ValidateSpec(ReconcilerDeps& deps, JobContext& ctx) {
  auto spec = ParseJobSpec(ctx.job.value("spec", nlohmann::json()), deps.defaults);
  if (!spec.ok()) {
    const std::string& msg = spec.status().message();
    const nlohmann::json* prev = FindCondition(ctx.status, "Validated");
    if (!prev || prev->value("message", "") != msg) {  // once per distinct problem
      core::LogInfo("job " + ctx.ns() + "/" + ctx.name() + " rejected: " + msg);
      RecordEvent(deps, ctx, true, "InvalidSpec", msg);
    }
    SetCondition(ctx.status, "Validated", false, "InvalidSpec", msg, ctx.generation(), ctx.now);
    if (!ctx.status.contains("phase")) ctx.status["phase"] = "Pending";
    return Step::kStop;
  }
  ctx.spec = std::move(spec).value();
  SetCondition(ctx.status, "Validated", true, "Valid", "spec is valid", ctx.generation(), ctx.now);
  return Step::kContinue;
}

}  // namespace ccltune::controller

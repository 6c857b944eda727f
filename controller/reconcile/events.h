// Kubernetes Events on the job (what `kubectl describe ctj` shows): attempt started, attempt
// failed, finished. Best effort: an Event that cannot be written is logged, never retried,
// and never fails a reconcile.
#pragma once

#include <string>

#include "controller/job/job_context.h"
#include "controller/reconcile/reconciler_deps.h"

namespace ccltune::controller {

void RecordEvent(ReconcilerDeps& deps, const JobContext& ctx, bool warning,
                 const std::string& reason, const std::string& message);

}  // namespace ccltune::controller

// The password of a job's Redis. The controller's own (CCLTUNE_REDIS_PASSWORD, from the
// default Secret) serves jobs that use the default Secret; a job naming another Secret in
// spec.cache.passwordSecretRef gets that Secret's value, read from the API server when
// needed and never stored, logged or written to status. No Secret: no password.
#pragma once

#include <optional>
#include <string>

#include "controller/job/job_context.h"
#include "controller/reconcile/reconciler_deps.h"
#include "core/base/status.h"

namespace ccltune::controller {

// FailedPrecondition (final: retrying will not help) when the Secret or its key is
// missing or the controller may not read it; Unavailable when the API server is.
core::Result<std::string> JobRedisPassword(ReconcilerDeps& deps, const std::string& ns,
                                           const std::optional<SecretKeyRef>& ref);

// spec.cache.passwordSecretRef of a raw job object, or the default (for the finalizer,
// which runs on jobs whose spec may no longer validate).
std::optional<SecretKeyRef> PasswordRefOf(const ReconcilerDeps& deps, const nlohmann::json& job);

}  // namespace ccltune::controller

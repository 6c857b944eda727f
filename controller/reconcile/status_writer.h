// The one status write of a Reconcile: PUT to the /status subresource, only when the desired
// status differs from what the object had. A 409 (someone updated the object since our GET)
// re-gets the object and re-applies the desired status on the fresh copy.
#pragma once

#include <nlohmann/json.hpp>

#include "controller/kube/kube_client.h"

namespace ccltune::controller {

core::Status WriteStatus(KubeClient& kube, const nlohmann::json& job,
                         const nlohmann::json& desired_status);

}  // namespace ccltune::controller

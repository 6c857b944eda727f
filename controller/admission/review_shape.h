// The JSON types of every field the webhook reads, checked before it reads any: an
// AdmissionReview or a pod whose field has the wrong type (a number where a string belongs, an
// object where an array belongs) is refused with the field's path instead of throwing from
// inside nlohmann (whose exception text would reach the HTTP answer). The API server never
// sends such a review; a hand-made or hostile one gets 400 naming the field.
//
// Only the fields read are checked (apiVersion, kind, request.{uid,kind,operation}; for a pod:
// metadata's name, namespace, labels, annotations; spec's containers, initContainers, volumes,
// and in each container its name, image, command, env, volumeMounts, ports); a null list or
// map counts as absent, as in Kubernetes' own JSON, a null scalar as the wrong type; anything
// else is not looked at.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/base/status.h"

namespace ccltune::controller {

// The envelope: InvalidArgument "request.uid: expected a string" (paths from the review's root).
core::Status CheckReviewShape(const nlohmann::json& review);

// A pod at `path` ("request.object" in a review): InvalidArgument
// "request.object.spec.containers[0].env[1].name: expected a string".
core::Status CheckPodShape(const nlohmann::json& pod, const std::string& path);

}  // namespace ccltune::controller

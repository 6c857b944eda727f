// The admission.k8s.io/v1 AdmissionReview protocol around InjectPod: the request body in, the
// HTTP answer out. Pure (no I/O), so the abuse cases are unit-tested here and over HTTPS.
//
// Answers: 400 with a one-line JSON error naming the field for a body it cannot read (not
// JSON, another apiVersion or kind, no request.uid, or a field it reads holding the wrong JSON
// type: "request.object.metadata.name: expected a string", review_shape.h); otherwise 200 with
// allowed: true, and a JSONPatch only for a CREATE of a v1 Pod that needs one. Any other kind
// or operation, or a request without an object, is allowed unchanged: this webhook never
// denies.
#pragma once

#include <string>

#include "controller/admission/inject_config.h"

namespace ccltune::controller {

struct AdmissionAnswer {
  int code = 200;
  std::string body;     // JSON
  std::string summary;  // for the log: what was injected, or why not
};

AdmissionAnswer ReviewAdmission(const std::string& body, const InjectConfig& config);

}  // namespace ccltune::controller

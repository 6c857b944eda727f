// The injection itself, pure: a Pod (JSON, as the API server hands it to an admission webhook)
// and the InjectConfig in, an RFC 6902 JSONPatch and a one-line summary out. No I/O, so unit
// tests cover every case; admission_review.cc wraps it in the AdmissionReview protocol.
//
// A pod opts in with label ccltune.io/inject: plugin, preload, telemetry, or several joined by
// '.' ("preload.telemetry"; a label value cannot hold a comma). It gets what docs/inject.md
// lists. Rules: a variable the user set keeps the user's value, except LD_PRELOAD, to which our
// library is appended; what is already there is not added again, so a second call (the API
// server's reinvocation) returns an empty patch. A pod whose own parts take the names or path
// of ours (injected_parts.h) is not injected. The annotation ccltune.io/injected says what was
// injected, or why nothing was.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "controller/admission/inject_config.h"
#include "controller/admission/injected_parts.h"
#include "core/base/status.h"

namespace ccltune::controller {

inline constexpr char kInjectLabel[] = "ccltune.io/inject";
inline constexpr char kInjectedAnnotation[] = "ccltune.io/injected";
inline constexpr char kMetricsLabel[] = "ccltune.io/metrics";  // what the PodMonitor selects

enum class Feature { kPlugin, kPreload, kTelemetry };

// "preload.telemetry" → {kPreload, kTelemetry}. InvalidArgument naming the label, the value
// and the allowed ones for anything else (an empty value too).
core::Result<std::vector<Feature>> ParseInjectLabel(const std::string& value);

struct Injection {
  nlohmann::json patch = nlohmann::json::array();  // RFC 6902 operations; empty: no change
  std::string summary;                             // the annotation's value
};

// Never fails: a pod it cannot inject gets only the annotation saying why (or, when even that
// cannot be written, an empty patch and the reason in `summary`). The pod's field types must
// have been checked (CheckPodShape, review_shape.h).
Injection InjectPod(const nlohmann::json& pod, const InjectConfig& config);

}  // namespace ccltune::controller

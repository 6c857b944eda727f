// ReviewAdmission (admission_review.h).
#include "controller/admission/admission_review.h"

#include <nlohmann/json.hpp>

#include "controller/admission/pod_injection.h"
#include "controller/admission/review_shape.h"
#include "controller/kube/base64.h"

namespace ccltune::controller {
namespace {

using Json = nlohmann::json;

constexpr char kApiVersion[] = "admission.k8s.io/v1";

// One line naming the field; `why` may quote the sender's text, hence the lenient dump.
AdmissionAnswer BadRequest(const std::string& why) {
  return {400, Json{{"error", why}}.dump(-1, ' ', false, Json::error_handler_t::replace),
          "rejected: " + why};
}

Json Allowed(const std::string& uid) {
  return {{"apiVersion", kApiVersion},
          {"kind", "AdmissionReview"},
          {"response", {{"uid", uid}, {"allowed", true}}}};
}

// The types of request.kind and operation are checked (review_shape.h) before this reads them.
bool IsPodCreate(const Json& req) {
  const Json& kind = req.value("kind", Json());
  return kind.is_object() && kind.value("group", Json("")) == "" &&
         kind.value("version", Json()) == "v1" && kind.value("kind", Json()) == "Pod" &&
         req.value("operation", Json()) == "CREATE";
}

// nlohmann's parser recurses once per nesting level: a body of a million '[' would exhaust
// the stack. Pods nest about 10 deep; anything past kMaxDepth is refused before parsing.
constexpr int kMaxDepth = 64;

bool TooDeep(const std::string& body) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : body) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

}  // namespace

AdmissionAnswer ReviewAdmission(const std::string& body, const InjectConfig& config) {
  if (TooDeep(body)) return BadRequest("body nests deeper than 64 levels");
  Json review = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (review.is_discarded() || !review.is_object()) return BadRequest("body is not a JSON object");
  if (core::Status s = CheckReviewShape(review); !s.ok()) return BadRequest(s.message());
  if (review.value("apiVersion", Json()) != kApiVersion)
    return BadRequest(std::string("apiVersion: expected ") + kApiVersion);
  if (review.value("kind", Json()) != "AdmissionReview")
    return BadRequest("kind: expected AdmissionReview");
  const Json& req = review.value("request", Json());
  if (!req.is_object()) return BadRequest("request: missing");
  const Json& uid = req.value("uid", Json());
  if (!uid.is_string() || uid.get<std::string>().empty()) return BadRequest("request.uid: missing");
  Json out = Allowed(uid);
  const Json& pod = req.value("object", Json());
  if (!IsPodCreate(req) || pod.is_null())
    return {200, out.dump(), "not a Pod CREATE: allowed unchanged"};
  if (!pod.is_object()) return BadRequest("request.object: expected an object");
  if (core::Status s = CheckPodShape(pod, "request.object"); !s.ok())
    return BadRequest(s.message());
  Injection inj = InjectPod(pod, config);
  if (!inj.patch.empty()) {
    out["response"]["patchType"] = "JSONPatch";
    out["response"]["patch"] = Base64Encode(inj.patch.dump());
  }
  return {200, out.dump(), inj.summary};
}

}  // namespace ccltune::controller

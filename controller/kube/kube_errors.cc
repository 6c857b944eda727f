#include "controller/kube/kube_client.h"

namespace ccltune::controller {

core::Status StatusFromHttp(int code, const std::string& body, const std::string& what) {
  Json status = Json::parse(body, nullptr, false);
  std::string reason, message = body.substr(0, 300);
  if (status.is_object()) {
    reason = status.value("reason", "");
    message = status.value("message", message);
  }
  std::string text = what + ": HTTP " + std::to_string(code) +
                     (reason.empty() ? "" : " " + reason) + ": " + message;
  if (code == 404) return core::NotFound(text);
  if (code == 409 && reason == "AlreadyExists") return core::FailedPrecondition(text);
  if (code == 409) return core::Aborted(text);
  if (code == 410) return core::DataLoss(text);
  if (code == 400 || code == 422) return core::InvalidArgument(text);
  if (code == 401 || code == 403) return core::Internal(text);
  return core::Unavailable(text);
}

}  // namespace ccltune::controller

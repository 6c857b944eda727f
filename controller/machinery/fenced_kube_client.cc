#include "controller/machinery/fenced_kube_client.h"

namespace ccltune::controller {

core::Status FencedKubeClient::Check(const std::string& what) const {
  core::Status s = fence_();
  return s.ok() ? s : s.WithContext(what);
}

core::Result<Json> FencedKubeClient::Create(const std::string& collection_path, const Json& body) {
  CCLTUNE_RETURN_IF_ERROR(Check("create " + collection_path));
  return inner_.Create(collection_path, body);
}

core::Result<Json> FencedKubeClient::Update(const std::string& path, const Json& body) {
  CCLTUNE_RETURN_IF_ERROR(Check("update " + path));
  return inner_.Update(path, body);
}

core::Result<Json> FencedKubeClient::MergePatch(const std::string& path, const Json& patch) {
  CCLTUNE_RETURN_IF_ERROR(Check("patch " + path));
  return inner_.MergePatch(path, patch);
}

core::Status FencedKubeClient::Delete(const std::string& path) {
  CCLTUNE_RETURN_IF_ERROR(Check("delete " + path));
  return inner_.Delete(path);
}

}  // namespace ccltune::controller

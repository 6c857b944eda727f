// KubeClient: the narrow interface through which the controller talks to the Kubernetes API
// server. Objects are plain JSON (nlohmann) so that no cpprest header leaks past the adapter
// (kube_client_cpprest.cc). Every call blocks for at most the client's request timeout;
// Watch blocks for at most the watch's timeoutSeconds plus a margin. Thread-safe.
//
// HTTP errors map onto core::StatusCode (helpers below), so callers branch on meaning:
//   404 NotFound            -> kNotFound
//   409 AlreadyExists       -> kFailedPrecondition  (create of a name that exists: adopt it)
//   409 Conflict            -> kAborted             (stale resourceVersion: re-get, retry)
//   410 Gone / Expired      -> kDataLoss            (watch history lost: relist)
//   400/422 Invalid         -> kInvalidArgument
//   401/403                 -> kInternal            (RBAC or credentials: not retryable)
//   5xx, 429, no connection -> kUnavailable
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "controller/kube/kube_config.h"
#include "core/base/status.h"

namespace ccltune::controller {

using Json = nlohmann::json;

class KubeClient {
 public:
  virtual ~KubeClient() = default;
  // `path` is the request path with query, e.g. "/api/v1/namespaces/ns/pods?labelSelector=a".
  virtual core::Result<Json> Get(const std::string& path) = 0;
  virtual core::Result<Json> Create(const std::string& collection_path, const Json& body) = 0;
  virtual core::Result<Json> Update(const std::string& path, const Json& body) = 0;
  virtual core::Result<Json> MergePatch(const std::string& path, const Json& patch) = 0;
  // Deletes with propagationPolicy Background (owned objects go through the GC cascade).
  virtual core::Status Delete(const std::string& path) = 0;
  // Streams one watch request: calls on_event for every event line until the server ends
  // the stream (timeoutSeconds), on_event returns false, or an error. An ERROR event with
  // code 410 returns kDataLoss.
  virtual core::Status Watch(const std::string& path, int timeout_seconds,
                             const std::function<bool(const Json&)>& on_event) = 0;
};

// `user_agent` goes in every request's User-Agent header (what audit logs record).
std::unique_ptr<KubeClient> MakeCpprestKubeClient(const KubeConfig& config,
                                                  const std::string& user_agent);

inline bool IsNotFound(const core::Status& s) { return s.code() == core::StatusCode::kNotFound; }
inline bool IsAlreadyExists(const core::Status& s) {
  return s.code() == core::StatusCode::kFailedPrecondition;
}
inline bool IsConflict(const core::Status& s) { return s.code() == core::StatusCode::kAborted; }
inline bool IsExpired(const core::Status& s) { return s.code() == core::StatusCode::kDataLoss; }

// Maps an HTTP status and the API server's Status body onto a core::Status.
core::Status StatusFromHttp(int http_code, const std::string& body, const std::string& what);

}  // namespace ccltune::controller

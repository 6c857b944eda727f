// Redis password of a job (job_password.h).
#include "controller/reconcile/job_password.h"

#include <chrono>
#include <map>
#include <mutex>

#include "controller/cache/job_redis.h"
#include "controller/kube/base64.h"
#include "controller/kube/kube_client.h"

namespace ccltune::controller {
namespace {

// Progress is polled every few seconds per running job: a read Secret is kept this long
// (in memory only) so a job's polls do not each cost an API request. A rotated Secret is
// picked up after at most this long.
constexpr auto kSecretTtl = std::chrono::seconds(30);

struct CachedSecret {
  std::string value;
  std::chrono::steady_clock::time_point read_at;
};

std::mutex& CacheMutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, CachedSecret>& Cache() {
  static std::map<std::string, CachedSecret> c;
  return c;
}

core::Result<std::string> ReadSecretKey(KubeClient& kube, const std::string& ns,
                                        const SecretKeyRef& ref) {
  const std::string what = "Secret " + ns + "/" + ref.name + " (spec.cache.passwordSecretRef)";
  auto secret = kube.Get("/api/v1/namespaces/" + ns + "/secrets/" + ref.name);
  if (!secret.ok()) {
    const core::StatusCode code = secret.status().code();
    if (code == core::StatusCode::kNotFound) return core::FailedPrecondition(what + " not found");
    if (code == core::StatusCode::kInternal) {  // 401/403: the controller's RBAC
      return core::FailedPrecondition("the controller may not read " + what +
                                      " (RBAC: get on secrets): " + secret.status().message());
    }
    return secret.status().WithContext(what);
  }
  const nlohmann::json& data = secret->value("data", nlohmann::json::object());
  if (!data.is_object() || !data.value(ref.key, nlohmann::json()).is_string()) {
    return core::FailedPrecondition(what + " has no key '" + ref.key + "'");
  }
  return Base64Decode(data[ref.key].get<std::string>());
}

}  // namespace

core::Result<std::string> JobRedisPassword(ReconcilerDeps& deps, const std::string& ns,
                                           const std::optional<SecretKeyRef>& ref) {
  if (!ref) return std::string();
  const std::optional<SecretKeyRef>& own = deps.defaults.password_ref;
  if (own && own->name == ref->name && own->key == ref->key) return deps.redis.own_password();
  const std::string key = ns + '/' + ref->name + '/' + ref->key;
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(CacheMutex());
    auto it = Cache().find(key);
    if (it != Cache().end() && now - it->second.read_at < kSecretTtl) return it->second.value;
  }
  CCLTUNE_ASSIGN_OR_RETURN(std::string value, ReadSecretKey(deps.kube, ns, *ref));
  std::lock_guard<std::mutex> lock(CacheMutex());
  Cache()[key] = {value, now};
  return value;
}

std::optional<SecretKeyRef> PasswordRefOf(const ReconcilerDeps& deps, const nlohmann::json& job) {
  const nlohmann::json& spec = job.value("spec", nlohmann::json::object());
  const nlohmann::json& cache = spec.value("cache", nlohmann::json::object());
  const nlohmann::json& ref =
      cache.is_object() ? cache.value("passwordSecretRef", nlohmann::json()) : nlohmann::json();
  if (ref.is_object() && ref.value("name", nlohmann::json()).is_string() &&
      ref.value("key", nlohmann::json()).is_string()) {
    return SecretKeyRef{ref["name"].get<std::string>(), ref["key"].get<std::string>()};
  }
  return deps.defaults.password_ref;
}

}  // namespace ccltune::controller

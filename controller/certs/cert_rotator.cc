// CertRotator (cert_rotator.h).
#include "controller/certs/cert_rotator.h"

#include <thread>

#include "controller/certs/cert_authority.h"
#include "controller/kube/base64.h"
#include "core/base/log.h"

namespace ccltune::controller {
namespace {

using Clock = std::chrono::system_clock;

std::string SecretPath(const CertRotatorConfig& c) {
  return "/api/v1/namespaces/" + c.ns + "/secrets/" + c.secret_name;
}

std::string Data(const Json& secret, const std::string& key) {
  const Json& data = secret.value("data", Json::object());
  return data.is_object() && data.value(key, Json()).is_string()
             ? Base64Decode(data[key].get<std::string>())
             : "";
}

// Renew once two thirds of the certificate's life have passed (or it does not parse). Its
// notBefore lies a minute early (clock skew, cert_authority.cc): not part of the life.
bool Due(const Json& secret) {
  CertPair pair{Data(secret, "tls.crt"), Data(secret, "tls.key")};
  if (!KeyMatches(pair) || Data(secret, "ca.crt").empty()) return true;
  auto v = ValidityOf(pair.cert_pem);
  if (!v.ok()) return true;
  const auto life = v->not_after - v->not_before - std::chrono::minutes(1);
  return Clock::now() > v->not_after - life / 3;
}

// The previous CA (first certificate of the old bundle) stays trusted next to the new one.
std::string FirstCert(const std::string& bundle) {
  const std::string end = "-----END CERTIFICATE-----";
  const auto at = bundle.find(end);
  return at == std::string::npos ? "" : bundle.substr(0, at + end.size()) + "\n";
}

core::Result<Json> NewSecretData(const CertRotatorConfig& c, const std::string& old_bundle) {
  CCLTUNE_ASSIGN_OR_RETURN(CertPair ca, MakeCa("ccltune-webhook-ca", c.validity * 2));
  CCLTUNE_ASSIGN_OR_RETURN(CertPair leaf, MakeServingCert(ca, c.hosts, c.validity));
  return Json{{"tls.crt", Base64Encode(leaf.cert_pem)},
              {"tls.key", Base64Encode(leaf.key_pem)},
              {"ca.crt", Base64Encode(ca.cert_pem + FirstCert(old_bundle))}};
}

}  // namespace

core::Result<Json> CertRotator::EnsureSecret() {
  auto got = kube_.Get(SecretPath(config_));
  if (!got.ok() && !IsNotFound(got.status())) return got.status();
  if (!config_.manage || (got.ok() && !Due(*got))) return got;
  const std::string old_bundle = got.ok() ? Data(*got, "ca.crt") : "";
  CCLTUNE_ASSIGN_OR_RETURN(Json data, NewSecretData(config_, old_bundle));
  if (!got.ok()) {
    Json secret = {{"apiVersion", "v1"},
                   {"kind", "Secret"},
                   {"type", "kubernetes.io/tls"},
                   {"metadata",
                    {{"name", config_.secret_name},
                     {"labels", {{"app.kubernetes.io/name", "ccltune-controller"}}}}},
                   {"data", data}};
    auto made = kube_.Create("/api/v1/namespaces/" + config_.ns + "/secrets", secret);
    if (IsAlreadyExists(made.status())) return kube_.Get(SecretPath(config_));  // another replica
    if (made.ok()) core::LogInfo("webhook certificate created in Secret " + config_.secret_name);
    return made;
  }
  Json secret = *got;
  secret["data"] = data;  // keeps metadata.resourceVersion: a concurrent renewal → Conflict
  auto updated = kube_.Update(SecretPath(config_), secret);
  if (IsConflict(updated.status())) return kube_.Get(SecretPath(config_));
  if (updated.ok()) core::LogInfo("webhook certificate renewed in Secret " + config_.secret_name);
  return updated;
}

core::Result<bool> CertRotator::EnsureCaBundle(const std::string& bundle_b64) {
  if (!config_.manage || config_.webhook_config.empty()) return true;
  const std::string path = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/" +
                           config_.webhook_config;
  CCLTUNE_ASSIGN_OR_RETURN(Json cfg, kube_.Get(path));
  bool changed = false;
  for (Json& hook : cfg["webhooks"]) {
    Json& client = hook["clientConfig"];
    if (client.value("caBundle", "") != bundle_b64) {
      client["caBundle"] = bundle_b64;
      changed = true;
    }
  }
  if (!changed) return true;
  auto r = kube_.Update(path, cfg);  // a Conflict is retried on the next pass
  if (!r.ok()) return r.status();
  core::LogInfo("caBundle of " + config_.webhook_config + " updated");
  return false;
}

// The caBundle first, the certificate after: the API server must trust the new CA before this
// replica presents a certificate it signed. A bundle written moments ago (by this pass or
// another replica's) reaches the API server's webhook clients a little later, so a new
// certificate waits until this replica has seen the same bundle in place on two passes, one
// check period apart; the previous certificate stays trusted meanwhile (ca.crt keeps its CA)
// and has a third of its life left. Before any certificate is served there is nothing to
// wait for.
core::Status CertRotator::SyncOnce() {
  CCLTUNE_ASSIGN_OR_RETURN(Json secret, EnsureSecret());
  const Json& data = secret.value("data", Json::object());
  const std::string bundle = data.value("ca.crt", "");
  CCLTUNE_ASSIGN_OR_RETURN(const bool in_place, EnsureCaBundle(bundle));
  const bool settled = in_place && bundle == bundle_seen_;
  bundle_seen_ = in_place ? bundle : "";
  const std::string cert = Data(secret, "tls.crt");
  const std::string serving = serving_.cert_pem();
  if (cert == serving || (!settled && !serving.empty())) return core::Status::Ok();
  return serving_.Set(cert, Data(secret, "tls.key")).WithContext("Secret " + config_.secret_name);
}

void CertRotator::Run(const std::atomic<bool>& stop) {
  auto next = std::chrono::steady_clock::now();
  while (!stop.load()) {
    if (std::chrono::steady_clock::now() >= next) {
      core::Status s = SyncOnce();
      if (!s.ok()) core::LogWarn("webhook certificate: " + s.ToString());
      next = std::chrono::steady_clock::now() +
             (s.ok() ? config_.check_every : std::chrono::milliseconds(1000));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace ccltune::controller

// CertRotator: keeps the webhook's serving certificate in a Secret of the controller's namespace
// (kubernetes.io/tls: tls.crt, tls.key, ca.crt), loads it into the ServingCertificate, and keeps
// the MutatingWebhookConfiguration's caBundle equal to ca.crt.
//
// Every replica runs one; the Secret is the single source, written with its resourceVersion, so
// two replicas renewing at once converge on one (the loser gets a Conflict and reloads).
// Renewal, once two thirds of the serving certificate's life have passed, makes a new CA and a
// new certificate; ca.crt holds the new CA and the previous one, so a replica still presenting
// the previous certificate stays trusted until it reloads. A replica presents a renewed
// certificate only once the caBundle has held its CA for a check period, so no handshake
// meets a certificate the API server cannot verify yet.
// With `manage` false (cert-manager writes the Secret and its cainjector the caBundle) it only
// loads the Secret.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "controller/certs/serving_certificate.h"
#include "controller/kube/kube_client.h"
#include "core/base/status.h"

namespace ccltune::controller {

struct CertRotatorConfig {
  std::string ns;
  std::string secret_name;
  std::string webhook_config;      // MutatingWebhookConfiguration; empty: leave caBundle alone
  std::vector<std::string> hosts;  // subjectAltNames of the serving certificate
  std::chrono::seconds validity{std::chrono::hours(24 * 90)};
  std::chrono::milliseconds check_every{std::chrono::minutes(1)};
  bool manage = true;
};

class CertRotator {
 public:
  CertRotator(KubeClient& kube, CertRotatorConfig config, ServingCertificate& serving)
      : kube_(kube), config_(std::move(config)), serving_(serving) {}

  // One pass: create or renew the Secret if due (manage), bring the caBundle in line, then
  // present the Secret's certificate (a renewed one only once the caBundle has held its CA
  // since the last pass). Blocks for at most a few API calls.
  core::Status SyncOnce();
  // SyncOnce every check_every (errors logged, retried after a second) until `stop`.
  void Run(const std::atomic<bool>& stop);

 private:
  core::Result<Json> EnsureSecret();
  // Whether the caBundle already held `bundle_b64` (or is not ours to keep); false when this
  // call wrote it.
  core::Result<bool> EnsureCaBundle(const std::string& bundle_b64);

  KubeClient& kube_;
  CertRotatorConfig config_;
  ServingCertificate& serving_;
  std::string bundle_seen_;  // the caBundle found in place at the last pass (SyncOnce)
};

}  // namespace ccltune::controller

// The pod-injection webhook's wiring: its serving certificate and rotator (controller/certs),
// its HTTPS listener, and the route POST /mutate-pods → ReviewAdmission
// (controller/admission). Runs on every replica, leader or not: the API server may call any.
#pragma once

#include <atomic>
#include <memory>
#include <thread>

#include "controller/admission/inject_config.h"
#include "controller/app/controller_options.h"
#include "controller/certs/cert_rotator.h"
#include "controller/certs/serving_certificate.h"
#include "controller/http/http_server.h"
#include "controller/kube/kube_client.h"

namespace ccltune::controller {

struct Webhook {
  InjectConfig inject;
  ServingCertificate cert;
  std::unique_ptr<CertRotator> rotator;
  std::unique_ptr<HttpServer> server;
};

// Largest AdmissionReview accepted: a pod is at most ~1.5 MiB in etcd; the review holds it
// once (CREATE has no oldObject), plus envelope.
inline constexpr size_t kMaxReviewBytes = 3 * 1024 * 1024;

// The webhook's flags, checked before the controller reaches out to anything: InvalidArgument
// naming the flag (a bad --webhook-bind-address, no image for the init container).
core::Status CheckWebhookFlags(const ControllerOptions& options);

// Nothing (nullptr) while options.webhook has neither a port nor a bind address; it listens on
// the bind address when set, else on every interface. The rotator thread runs until `stop`.
core::Result<std::unique_ptr<Webhook>> StartWebhook(const ControllerOptions& options,
                                                    const std::string& default_namespace,
                                                    KubeClient& kube,
                                                    const std::atomic<bool>& stop);

}  // namespace ccltune::controller

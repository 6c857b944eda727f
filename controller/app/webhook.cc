// StartWebhook (webhook.h).
#include "controller/app/webhook.h"

#include <sstream>

#include "controller/admission/admission_review.h"
#include "core/base/log.h"

namespace ccltune::controller {
namespace {

core::Result<ProgramCredential> Credential(const std::string& flag, const std::string& user,
                                           const std::string& value) {
  const auto slash = value.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == value.size())
    return core::InvalidArgument(flag + ": expected NAME/KEY, got '" + value + "'");
  return ProgramCredential{user, value.substr(0, slash), value.substr(slash + 1)};
}

std::vector<std::string> Hosts(const WebhookOptions& w, const std::string& ns) {
  std::vector<std::string> out;
  std::stringstream in(w.hosts);
  for (std::string h; std::getline(in, h, ',');) {
    if (!h.empty()) out.push_back(h);
  }
  if (out.empty()) {  // the names the API server may use for the Service
    out = {w.service + "." + ns + ".svc", w.service + "." + ns + ".svc.cluster.local",
           w.service + "." + ns, w.service};
  }
  return out;
}

// The API server calls a fixed port: --webhook-bind-address needs one (0 is not "any free").
core::Result<BindAddress> WebhookAddress(const WebhookOptions& w) {
  const std::string flag = "--webhook-bind-address";
  CCLTUNE_ASSIGN_OR_RETURN(BindAddress at, ListenAddress(flag, w.bind_address, w.port));
  if (!w.bind_address.empty() && at.port == 0)
    return core::InvalidArgument(flag + ": port 0; the webhook needs a fixed port (leave both " +
                                 "--webhook-bind-address and --webhook-port out to turn it off)");
  return at;
}

core::Result<InjectConfig> MakeInjectConfig(const ControllerOptions& o) {
  InjectConfig c;
  c.image = o.webhook.image.empty() ? o.worker_image : o.webhook.image;
  if (c.image.empty())
    return core::InvalidArgument("the webhook needs --inject-image or --worker-image");
  c.redis_url = o.webhook.redis_url.empty() ? o.redis_url : o.webhook.redis_url;
  c.metrics_port = o.webhook.metrics_port;
  CCLTUNE_ASSIGN_OR_RETURN(
      c.reader, Credential("--inject-reader-secret", "ccltune-reader", o.webhook.reader_secret));
  CCLTUNE_ASSIGN_OR_RETURN(c.telemetry, Credential("--inject-telemetry-secret", "ccltune-telemetry",
                                                   o.webhook.telemetry_secret));
  return c;
}

HttpHandler MakeHandler(const InjectConfig& inject) {
  const InjectConfig* c = &inject;
  return [c](const HttpRequest& req) -> HttpResponse {
    if (req.path != "/mutate-pods") return {404, "text/plain", "not found (POST /mutate-pods)\n"};
    if (req.method != "POST") return {405, "text/plain", "POST an AdmissionReview\n"};
    AdmissionAnswer a = ReviewAdmission(req.body, *c);
    return {a.code, "application/json", std::move(a.body)};
  };
}

bool WebhookOn(const WebhookOptions& w) { return w.port != 0 || !w.bind_address.empty(); }

}  // namespace

core::Status CheckWebhookFlags(const ControllerOptions& o) {
  if (!WebhookOn(o.webhook)) return core::Status::Ok();
  CCLTUNE_RETURN_IF_ERROR(WebhookAddress(o.webhook).status());
  return MakeInjectConfig(o).status();
}

core::Result<std::unique_ptr<Webhook>> StartWebhook(const ControllerOptions& o,
                                                    const std::string& default_namespace,
                                                    KubeClient& kube,
                                                    const std::atomic<bool>& stop) {
  if (!WebhookOn(o.webhook)) return std::unique_ptr<Webhook>();
  CCLTUNE_ASSIGN_OR_RETURN(BindAddress at, WebhookAddress(o.webhook));
  auto hook = std::make_unique<Webhook>();
  CCLTUNE_ASSIGN_OR_RETURN(hook->inject, MakeInjectConfig(o));
  CertRotatorConfig rc;
  rc.ns = o.webhook.ns.empty() ? default_namespace : o.webhook.ns;
  rc.secret_name = o.webhook.secret;
  rc.webhook_config = o.webhook.config_name;
  rc.hosts = Hosts(o.webhook, rc.ns);
  rc.validity = std::chrono::seconds(o.webhook.cert_validity_seconds);
  rc.check_every = std::chrono::seconds(o.webhook.cert_check_seconds);
  rc.manage = !o.webhook.cert_manager;
  hook->rotator = std::make_unique<CertRotator>(kube, rc, hook->cert);
  // First pass now, so that the listener has a certificate from its first connection; when the
  // API server cannot be reached the rotator's loop keeps trying (handshakes fail meanwhile,
  // and failurePolicy Ignore lets pods through).
  if (core::Status s = hook->rotator->SyncOnce(); !s.ok())
    core::LogWarn("webhook certificate (retrying): " + s.ToString());
  HttpServerOptions so;
  so.threads = HttpServer::kThreads;
  so.tls = &hook->cert;
  so.max_body = kMaxReviewBytes;
  CCLTUNE_ASSIGN_OR_RETURN(hook->server, HttpServer::Start(at, so, MakeHandler(hook->inject)));
  CertRotator* r = hook->rotator.get();
  std::thread([r, &stop] { r->Run(stop); }).detach();  // ends with the process, as informers
  core::LogInfo("serving the injection webhook (HTTPS) on " + at.host + ":" +
                std::to_string(hook->server->port()));
  return hook;
}

}  // namespace ccltune::controller

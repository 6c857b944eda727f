// The cpprestsdk adapter behind KubeClient: the only file of the controller that includes
// cpprest (its headers compile slowly and its U() macro clashes with fmt). Exceptions from
// cpprest stop here and become Status values.
#include <cpprest/containerstream.h>
#include <cpprest/http_client.h>
#include <cpprest/rawptrstream.h>

#include <boost/asio/ssl.hpp>
#include <chrono>
#include <memory>

#include "controller/kube/kube_client.h"

namespace ccltune::controller {
namespace {

namespace http = web::http;
using web::http::client::http_client;
using web::http::client::http_client_config;

constexpr auto kRequestTimeout = std::chrono::seconds(30);
// A watch ends by the server's timeoutSeconds; the client's idle timeout must be longer or
// cpprest would cut a quiet watch first.
constexpr int kWatchTimeoutMarginSeconds = 60;

class CpprestKubeClient : public KubeClient {
 public:
  CpprestKubeClient(KubeConfig config, std::string user_agent)
      : config_(config),
        tokens_(config),
        client_(config.server, MakeConfig(kRequestTimeout)),
        user_agent_(std::move(user_agent)) {}

  core::Result<Json> Get(const std::string& path) override {
    return Call(http::methods::GET, path, nullptr, "application/json", "GET " + path);
  }
  core::Result<Json> Create(const std::string& path, const Json& body) override {
    return Call(http::methods::POST, path, &body, "application/json", "create " + path);
  }
  core::Result<Json> Update(const std::string& path, const Json& body) override {
    return Call(http::methods::PUT, path, &body, "application/json", "update " + path);
  }
  core::Result<Json> MergePatch(const std::string& path, const Json& patch) override {
    return Call(http::methods::PATCH, path, &patch, "application/merge-patch+json",
                "patch " + path);
  }
  core::Status Delete(const std::string& path) override {
    Json opts = {
        {"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"propagationPolicy", "Background"}};
    auto r = Call(http::methods::DEL, path, &opts, "application/json", "delete " + path);
    return r.status();
  }
  core::Status Watch(const std::string& path, int timeout_seconds,
                     const std::function<bool(const Json&)>& on_event) override;

 private:
  http_client_config MakeConfig(std::chrono::seconds timeout) const {
    http_client_config cfg;
    cfg.set_timeout(timeout);
    cfg.set_validate_certificates(!config_.insecure_skip_tls_verify);
    std::string ca_file = config_.ca_file, ca_data = config_.ca_data;
    if (!ca_file.empty() || !ca_data.empty()) {
      cfg.set_ssl_context_callback([ca_file, ca_data](boost::asio::ssl::context& ctx) {
        if (!ca_file.empty()) ctx.load_verify_file(ca_file);
        if (!ca_data.empty()) ctx.add_certificate_authority(boost::asio::buffer(ca_data));
      });
    }
    return cfg;
  }

  http::http_request MakeRequest(const http::method& m, const std::string& path) {
    http::http_request req(m);
    req.set_request_uri(path);
    req.headers().add("Accept", "application/json");
    req.headers().add("User-Agent", user_agent_);
    std::string token = tokens_.Token();
    if (!token.empty()) req.headers().add("Authorization", "Bearer " + token);
    return req;
  }

  core::Result<Json> Call(const http::method& m, const std::string& path, const Json* body,
                          const std::string& content_type, const std::string& what);
  core::Status StreamLines(http::http_response& resp,
                           const std::function<bool(const Json&)>& on_event,
                           const std::string& what);

  KubeConfig config_;
  TokenSource tokens_;
  http_client client_;
  std::string user_agent_;
};

core::Result<Json> CpprestKubeClient::Call(const http::method& m, const std::string& path,
                                           const Json* body, const std::string& content_type,
                                           const std::string& what) {
  try {
    http::http_request req = MakeRequest(m, path);
    // replace: a stray invalid UTF-8 byte must not turn into an exception mid-reconcile.
    if (body)
      req.set_body(body->dump(-1, ' ', false, Json::error_handler_t::replace), content_type);
    http::http_response resp = client_.request(req).get();
    std::string text = resp.extract_utf8string(true).get();
    int code = resp.status_code();
    if (code < 200 || code >= 300) return StatusFromHttp(code, text, what);
    if (text.empty()) return Json::object();
    return Json::parse(text);
  } catch (const std::exception& e) {
    return core::Unavailable(what + ": " + e.what());
  }
}

core::Status CpprestKubeClient::StreamLines(http::http_response& resp,
                                            const std::function<bool(const Json&)>& on_event,
                                            const std::string& what) {
  auto body = resp.body();
  while (true) {
    concurrency::streams::container_buffer<std::string> line;
    size_t n = body.read_line(line).get();
    if (n == 0 && body.is_eof()) return core::Status::Ok();  // server ended the watch
    const std::string& text = line.collection();
    if (text.empty() || text == "\r") continue;
    Json event = Json::parse(text, nullptr, false);
    if (event.is_discarded()) return core::Internal(what + ": bad watch line");
    if (event.value("type", "") == "ERROR") {
      const Json& obj = event["object"];
      return StatusFromHttp(obj.value("code", 500), obj.dump(), what);
    }
    if (!on_event(event)) return core::Status::Ok();
  }
}

core::Status CpprestKubeClient::Watch(const std::string& path, int timeout_seconds,
                                      const std::function<bool(const Json&)>& on_event) {
  std::string what = "watch " + path;
  try {
    // A client per watch: its idle timeout differs from the request client's.
    http_client client(
        config_.server,
        MakeConfig(std::chrono::seconds(timeout_seconds + kWatchTimeoutMarginSeconds)));
    std::string sep = path.find('?') == std::string::npos ? "?" : "&";
    http::http_request req = MakeRequest(
        http::methods::GET, path + sep + "watch=true&allowWatchBookmarks=true&timeoutSeconds=" +
                                std::to_string(timeout_seconds));
    http::http_response resp = client.request(req).get();
    if (resp.status_code() != 200) {
      return StatusFromHttp(resp.status_code(), resp.extract_utf8string(true).get(), what);
    }
    return StreamLines(resp, on_event, what);
  } catch (const std::exception& e) {
    return core::Unavailable(what + ": " + e.what());
  }
}

}  // namespace

std::unique_ptr<KubeClient> MakeCpprestKubeClient(const KubeConfig& config,
                                                  const std::string& user_agent) {
  return std::make_unique<CpprestKubeClient>(config, user_agent);
}

}  // namespace ccltune::controller

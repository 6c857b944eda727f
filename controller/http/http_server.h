// HttpServer: one HTTP listener of the controller on civetweb, the server prometheus-cpp's
// Exposer embeds. The controller runs two, each with its own civetweb context (threads, queue,
// socket): the API port (/metrics, the results API) and the probe port (/healthz, /readyz,
// --health-probe-bind-address as controller-runtime has it), so that no load on the API port
// can hold a probe up. Not cpprestsdk's http_listener: on Linux (asio) it ignores
// http_listener_config::timeout() and bounds neither the request head nor slow or idle
// clients (measured: a silent or one-byte-a-second client held for as long as it likes, a
// 32 MiB header read whole; docs/metrics.md, "How metrics and HTTP are served").
//
// The limits are civetweb options, set in http_server.cc: at most `threads` requests are
// served at once (later connections wait in civetweb's queue and the listen backlog); a
// request's head must arrive within kRequestTimeoutMs of the connection, and each send of the
// answer is bounded alike; a head (URL and headers) over kMaxRequestBytes is answered 400 and
// closed; one request per connection. Before the handler: GET and HEAD only (405 otherwise),
// and a malformed query string is answered 400.
//
// The webhook's listener (HttpServerOptions) adds HTTPS, whose certificate comes from a
// ServingCertificate on each handshake (rotation without a restart; the handshake is bounded
// by the same request timeout), and POST with a body of at most max_body bytes, read whole
// within kBodyDeadlineMs: a longer body is answered 413, a slower one 408.
//
// Thread-safety: the handler runs on civetweb's threads, several at once: it must be
// thread-safe. RAII: the destructor stops the threads and closes the socket.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "controller/http/bind_address.h"
#include "core/base/status.h"

struct mg_context;
struct mg_connection;

namespace ccltune::controller {

class ServingCertificate;

struct HttpRequest {
  std::string method;
  std::string path;                          // without the query
  std::map<std::string, std::string> query;  // decoded
  std::string body;                          // POST only (HttpServerOptions::max_body > 0)
};

struct HttpResponse {
  int code = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  int threads = 32;
  ServingCertificate* tls = nullptr;  // HTTPS when set; must outlive the server
  size_t max_body = 0;                // > 0: POST allowed, with a body up to this size
};

class HttpServer {
 public:
  static constexpr int kThreads = 32;      // the API port's
  static constexpr int kProbeThreads = 4;  // the probe port's: a kubelet sends one at a time
  static constexpr int kRequestTimeoutMs = 2000;
  static constexpr int kMaxRequestBytes = 16384;
  static constexpr int kBodyDeadlineMs = 3000;

  // Listens on `at` (port 0: any free port, see port()) before returning; Unavailable when it
  // cannot.
  static core::Result<std::unique_ptr<HttpServer>> Start(const BindAddress& at, int threads,
                                                         HttpHandler handler);
  static core::Result<std::unique_ptr<HttpServer>> Start(const BindAddress& at,
                                                         const HttpServerOptions& options,
                                                         HttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  int port() const { return port_; }

 private:
  HttpServer(HttpHandler handler, const HttpServerOptions& options)
      : handler_(std::move(handler)), options_(options) {}
  static int OnRequest(mg_connection* conn, void* self);
  static int InitSsl(void* ssl_ctx, void* self);

  HttpHandler handler_;
  HttpServerOptions options_;
  mg_context* context_ = nullptr;
  int port_ = 0;
};

// "a=1&b=x%2Cy" → {a: "1", b: "x,y"}. Percent-decoding is cpprestsdk's web::uri::decode,
// which rejects a malformed escape ("%zz", "%4"): InvalidArgument. '+' is a space, as HTML
// forms and Python's urlencode send it; a key without '=' has an empty value.
core::Result<std::map<std::string, std::string>> ParseQueryString(const std::string& raw);

}  // namespace ccltune::controller

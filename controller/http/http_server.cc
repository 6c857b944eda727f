#include "controller/http/http_server.h"

#include <civetweb.h>
#include <openssl/ssl.h>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <string>

#include "controller/certs/serving_certificate.h"
#include "core/base/log.h"

namespace ccltune::controller {
namespace {

// The whole answer in one write: civetweb's mg_response_header_* calls send each header line
// on its own, which cost 0.31 ms of CPU per results-API request under load against 0.21 ms.
void Send(mg_connection* conn, const HttpResponse& r, bool with_body) {
  std::string out =
      "HTTP/1.1 " + std::to_string(r.code) + " " + mg_get_response_code_text(conn, r.code) +
      "\r\nContent-Type: " + r.content_type +
      "\r\nContent-Length: " + std::to_string(r.body.size()) + "\r\nConnection: close\r\n\r\n";
  if (with_body) out += r.body;
  mg_write(conn, out.data(), out.size());
}

// The edge between civetweb's C threads and our C++: an exception must not cross it. Its text
// goes to the log, not to the client: it may quote what the client sent or name our internals.
HttpResponse Handle(const HttpHandler& handler, const HttpRequest& req) {
  try {
    return handler(req);
  } catch (const std::exception& e) {
    core::LogError(req.method + " " + req.path + ": " + e.what());
    return {500, "text/plain", "internal error\n"};
  }
}

// The body of a POST, whole, within kBodyDeadlineMs. One byte per mg_read: civetweb's mg_read
// loops until it has all it was asked for as long as bytes keep coming, so a larger read would
// let a client trickling a byte a second hold the thread past any deadline; a one-byte read
// waits at most the request timeout and comes from OpenSSL's buffer when the record is there
// (measured: tests/bench/results/admission-load.txt).
// 0 when read; otherwise the HTTP code to answer.
int ReadBody(mg_connection* conn, size_t max_body, std::string& body) {
  const long long length = mg_get_request_info(conn)->content_length;
  if (length < 0) return 411;
  if (static_cast<unsigned long long>(length) > max_body) return 413;
  body.resize(static_cast<size_t>(length));
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(HttpServer::kBodyDeadlineMs);
  size_t got = 0;
  while (got < body.size()) {
    if (std::chrono::steady_clock::now() > deadline) return 408;
    const int n = mg_read(conn, body.data() + got, 1);
    if (n <= 0) return 408;  // closed or timed out mid-body
    got += static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace

// civetweb made the SSL_CTX (with the libssl it loads itself, the same library as ours):
// the certificate comes from the ServingCertificate on each handshake. 1: nothing for civetweb
// to load. (Not external_ssl_ctx: with that callback civetweb 1.15 never loads its libssl
// function table and its worker thread calls a null pointer on the first connection.)
int HttpServer::InitSsl(void* ssl_ctx, void* self) {
  auto* server = static_cast<HttpServer*>(self);
  SSL_CTX_set_min_proto_version(static_cast<SSL_CTX*>(ssl_ctx), TLS1_2_VERSION);
  server->options_.tls->AttachTo(ssl_ctx);
  return 1;
}

core::Result<std::unique_ptr<HttpServer>> HttpServer::Start(const BindAddress& at, int threads,
                                                            HttpHandler handler) {
  HttpServerOptions options;
  options.threads = threads;
  return Start(at, options, std::move(handler));
}

core::Result<std::unique_ptr<HttpServer>> HttpServer::Start(const BindAddress& at,
                                                            const HttpServerOptions& o,
                                                            HttpHandler handler) {
  // A trailing 's' is civetweb's mark of an HTTPS port.
  const std::string ports = at.ListeningPorts() + (o.tls ? "s" : ""),
                    thread_count = std::to_string(o.threads),
                    timeout = std::to_string(kRequestTimeoutMs),
                    head = std::to_string(kMaxRequestBytes);
  // clang-format off
  const char* options[] = {
      "listening_ports", ports.c_str(),
      "num_threads", thread_count.c_str(),
      "request_timeout_ms", timeout.c_str(),
      "max_request_size", head.c_str(),
      "listen_backlog", "512",
      "enable_keep_alive", "no",
      "tcp_nodelay", "1",  // no Nagle wait on the last segment of a long answer
      nullptr};
  // clang-format on
  std::unique_ptr<HttpServer> server(new HttpServer(std::move(handler), o));
  mg_callbacks callbacks{};
  if (o.tls) {
    // civetweb loads its libssl function table only when the library is initialized with
    // TLS (before the first HTTPS context; once per process is enough, later calls count).
    if ((mg_init_library(MG_FEATURES_TLS) & MG_FEATURES_TLS) == 0)
      return core::Unavailable("HTTPS server: civetweb cannot load libssl.so/libcrypto.so");
    callbacks.init_ssl = &HttpServer::InitSsl;
  }
  server->context_ = mg_start(&callbacks, server.get(), options);
  if (server->context_ == nullptr)
    return core::Unavailable("HTTP server: cannot listen on " + ports);
  mg_set_request_handler(server->context_, "/", &HttpServer::OnRequest, server.get());
  mg_server_port bound{};
  if (mg_get_server_ports(server->context_, 1, &bound) != 1)
    return core::Internal("HTTP server: civetweb reports no port");
  server->port_ = bound.port;
  return server;
}

HttpServer::~HttpServer() {
  if (context_ != nullptr) mg_stop(context_);
}

int HttpServer::OnRequest(mg_connection* conn, void* self) {
  const mg_request_info* info = mg_get_request_info(conn);
  auto* server = static_cast<HttpServer*>(self);
  HttpRequest req{info->request_method, info->local_uri ? info->local_uri : "/", {}, {}};
  const bool head = req.method == "HEAD";
  const bool post = req.method == "POST" && server->options_.max_body > 0;
  HttpResponse resp;
  auto query = ParseQueryString(info->query_string ? info->query_string : "");
  int body_error = post ? ReadBody(conn, server->options_.max_body, req.body) : 0;
  if (req.method != "GET" && !head && !post) {
    resp = {405, "text/plain",
            server->options_.max_body > 0 ? "only GET and POST\n" : "only GET\n"};
  } else if (body_error != 0) {
    resp = {body_error, "application/json",
            body_error == 413   ? "{\"error\":\"body larger than this server accepts\"}"
            : body_error == 411 ? "{\"error\":\"Content-Length required\"}"
                                : "{\"error\":\"body not received in time\"}"};
  } else if (!query.ok()) {
    resp = {400, "application/json",
            "{\"error\":\"malformed query string (a '%' escape needs two hex digits)\"}"};
  } else {
    req.query = std::move(query).value();
    resp = Handle(server->handler_, req);
  }
  Send(conn, resp, !head);
  return resp.code;
}

}  // namespace ccltune::controller

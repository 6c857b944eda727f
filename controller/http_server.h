// A tiny blocking HTTP/1.1 server for /healthz, /readyz, /metrics and the results API:
// a few threads accepting on one socket, one request per connection (Connection: close),
// GET only, bounded reads (request head <= 16 KiB, 5 s receive timeout) so a slow client
// holds one thread at most. Several threads because the results API serves production
// jobs concurrently (measured: tests/bench/results_api_load.sh); the handler must be
// thread-safe. This avoids pulling cpprest's listener in.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"

namespace ccltune::controller {

struct HttpRequest {
  std::string method;
  std::string path;                          // without the query
  std::map<std::string, std::string> query;  // decoded
};

struct HttpResponse {
  int code = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

class HttpServer {
 public:
  // Binds 0.0.0.0:port (0 = any free port) and starts serving on its own thread.
  static core::Result<std::unique_ptr<HttpServer>> Start(int port, HttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  int port() const { return port_; }

 private:
  HttpServer(int fd, int port, HttpHandler handler);
  void Serve();
  void HandleConnection(int fd);

  int fd_;
  int port_;
  HttpHandler handler_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// Parses "GET /p?a=1 HTTP/1.1"; false when malformed.
bool ParseRequestLine(const std::string& line, HttpRequest* out);

}  // namespace ccltune::controller

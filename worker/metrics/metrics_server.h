// MetricsServer: a tiny HTTP/1.1 server answering `GET /metrics` with the text exposition of a
// Registry (what Prometheus scrapes while a worker is alive). It only observes the registry.
//
// One thread accepts and answers connections one at a time; each connection is bounded by
// Options::io_timeout_seconds and Options::max_request_bytes, so a slow or hostile client
// delays a scrape by at most that long and can never grow memory. `GET|HEAD /metrics` → 200
// (Content-Type text/plain; version=0.0.4), another method on /metrics → 405, any other path
// → 404, an oversized request → 431. No keep-alive: Prometheus reconnects each scrape.
//
// Thread-safety: construction and destruction on one thread; port() from any thread.
// Ownership: `registry` (or what `render` reads) must outlive the server. RAII: the destructor
// stops the thread (within one poll round, it is woken through a pipe) and closes the socket.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "core/metrics.h"
#include "core/status.h"
#include "worker/metrics/socket_io.h"

namespace ccltune::worker {

class MetricsServer {
 public:
  struct Options {
    std::string bind_address = "0.0.0.0";  // "127.0.0.1" to stay on loopback
    int port = 0;                          // 0 = an ephemeral port; see port()
    double io_timeout_seconds = 5;
    std::size_t max_request_bytes = 8192;
  };

  // Binds and listens before returning, so a failure (port taken: Unavailable; bad address:
  // InvalidArgument) is reported here and a scrape right after Start() succeeds.
  static core::Result<std::unique_ptr<MetricsServer>> Start(const core::Registry& registry,
                                                            const Options& options);
  // Same, for an exposition that is not one Registry (e.g. a component that refreshes gauges
  // before serializing). `render` runs on the server thread and must be thread-safe.
  using Render = std::function<std::string()>;
  static core::Result<std::unique_ptr<MetricsServer>> Start(Render render, const Options& options);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const { return port_; }

 private:
  MetricsServer(Render render, const Options& options, net::UniqueFd listener, int port,
                net::UniqueFd wake_read, net::UniqueFd wake_write);
  void Serve();
  void HandleConnection(int fd) const;
  std::string Respond(const std::string& request) const;

  Render render_;
  Options options_;
  net::UniqueFd listener_;
  int port_ = 0;
  net::UniqueFd wake_read_;  // the destructor writes to wake_write_ to stop Serve()
  net::UniqueFd wake_write_;
  std::thread thread_;
};

}  // namespace ccltune::worker

// MetricsExposer: a rank's `GET /metrics` while it is alive (what Prometheus scrapes):
// prometheus-cpp's Exposer, whose embedded civetweb server only observes the Registry.
//
// The HTTP limits are civetweb options, set here (kThreads, kListenBacklog, kRequestTimeoutMs,
// kMaxRequestBytes): at most kThreads connections are served at once, later ones wait in
// civetweb's queue and the listen backlog; a request's head must arrive within
// kRequestTimeoutMs of the connection (a silent or one-byte-a-second client is closed then)
// and each send of the answer is bounded alike; a head over kMaxRequestBytes is answered 400
// and closed; one request per connection (no keep-alive), as Prometheus scrapes. Other paths
// get civetweb's 404, other methods its 405.
//
// Thread-safety: construction and destruction on one thread; port() from any thread.
// Ownership: holds the registry's collectable weakly, so the registry may go first (scrapes
// then answer an empty body). RAII: the destructor stops civetweb's threads and closes the
// listening socket.
#pragma once

#include <memory>
#include <string>

#include "core/base/status.h"
#include "core/metrics/metrics.h"

namespace prometheus {
class Exposer;
}

namespace ccltune::worker {

class MetricsExposer {
 public:
  static constexpr int kThreads = 32;
  static constexpr int kListenBacklog = 512;
  static constexpr int kRequestTimeoutMs = 2000;
  static constexpr int kMaxRequestBytes = 8192;

  struct Options {
    std::string bind_address = "0.0.0.0";  // "127.0.0.1" to stay on loopback
    int port = 0;                          // 0 = an ephemeral port; see port()
  };

  // Listens before returning, so a scrape right after Start() succeeds. Errors: a bind
  // address that is not IPv4 (InvalidArgument), a port that cannot be bound (Unavailable,
  // "port 9400 on 0.0.0.0 is in use (Address already in use)").
  static core::Result<std::unique_ptr<MetricsExposer>> Start(const core::Registry& registry,
                                                             const Options& options);
  ~MetricsExposer();
  MetricsExposer(const MetricsExposer&) = delete;
  MetricsExposer& operator=(const MetricsExposer&) = delete;

  int port() const { return port_; }

 private:
  MetricsExposer(std::unique_ptr<prometheus::Exposer> exposer, int port);
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_ = 0;
};

}  // namespace ccltune::worker

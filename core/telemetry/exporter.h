// The process's /metrics endpoint and its Pushgateway pushes (docs/design.md §13).
//
// Endpoint: prometheus-cpp's Exposer (civetweb) on 0.0.0.0:port, which only observes the
// Registry; few threads and short request timeouts, since it shares the program's machine.
// Pusher: a thread that pushes the Registry every period to job="ccltune-program", grouped
// by pod and local_rank (not `rank`: the families carry a `rank` label of their own, per
// communicator, which a grouping label of that name would override), and once more at
// Stop. A gateway that fails is said once, not once per push; no caller ever waits on it.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "core/base/status.h"
#include "core/metrics/metrics.h"
#include "core/telemetry/stoppable_thread.h"
#include "core/telemetry/telemetry_settings.h"

namespace prometheus {
class Exposer;
}

namespace ccltune::telemetry {

class Endpoint {
 public:
  // Listens before returning. Unavailable naming the port when it cannot be bound.
  static core::Result<std::unique_ptr<Endpoint>> Start(const core::Registry& registry, int port);
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

 private:
  explicit Endpoint(std::unique_ptr<prometheus::Exposer> exposer);
  std::unique_ptr<prometheus::Exposer> exposer_;
};

// The port for a local rank: `base` + local rank; InvalidArgument past 65535.
core::Result<int> EndpointPort(int base, int local_rank);

class Pusher {
 public:
  // `pod`: the grouping value (the pod's name, else the host's). Starts the thread.
  Pusher(const core::Registry& registry, PushTarget target, const std::string& pod, int local_rank,
         double period_seconds);
  ~Pusher();  // Stop(now)
  Pusher(const Pusher&) = delete;
  Pusher& operator=(const Pusher&) = delete;

  // The last push, then the thread ends; waited for until `deadline`.
  void Stop(std::chrono::steady_clock::time_point deadline);

 private:
  std::unique_ptr<StoppableThread> thread_;
};

}  // namespace ccltune::telemetry

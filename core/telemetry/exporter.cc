#include "core/telemetry/exporter.h"

#include <exception>

#include "core/base/log.h"
#include "prometheus/exposer.h"
#include "prometheus/gateway.h"

namespace ccltune::telemetry {
namespace {

std::vector<std::string> CivetOptions(int port) {
  // clang-format off
  return {"listening_ports", "0.0.0.0:" + std::to_string(port),
          "num_threads", "2",
          "request_timeout_ms", "2000",
          "enable_keep_alive", "no"};
  // clang-format on
}

// The Pushgateway's path segments take [A-Za-z0-9_.-]; prometheus-cpp 1.0.1 does not encode.
std::string Segment(const std::string& value) {
  std::string out = value.empty() ? "unknown" : value;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') c = '_';
  return out;
}

// Pushes until stopped, then once more. Says the first failure and the first recovery
// after it, never more: a gateway that flaps must not fill the program's log.
void PushLoop(const StopSignal& stop, prometheus::Gateway& gateway, const std::string& url,
              std::chrono::duration<double> period) {
  bool said_failure = false, said_recovery = false;
  for (bool last = false; !last;) {
    last = stop.WaitFor(std::chrono::duration_cast<std::chrono::steady_clock::duration>(period));
    int code = -1;  // the HTTP status, or minus a CURLcode
    try {
      code = gateway.Push();
    } catch (const std::exception&) {
    }
    const bool ok = code >= 200 && code < 300;
    if (!ok && !said_failure)
      core::LogWarn("telemetry: push to the Pushgateway " + url + " failed (" +
                    (code < 0 ? "no connection" : "HTTP " + std::to_string(code)) +
                    "); pushes go on, and this line is not repeated");
    if (ok && said_failure && !said_recovery)
      core::LogInfo("telemetry: pushes to " + url + " work again");
    said_recovery = said_recovery || (ok && said_failure);
    said_failure = said_failure || !ok;
  }
}

}  // namespace

core::Result<int> EndpointPort(int base, int local_rank) {
  const long port = static_cast<long>(base) + local_rank;
  if (port > 65535)
    return core::InvalidArgument("CCLTUNE_METRICS_PORT " + std::to_string(base) + " + local rank " +
                                 std::to_string(local_rank) + " = " + std::to_string(port) +
                                 " is past 65535");
  return static_cast<int>(port);
}

core::Result<std::unique_ptr<Endpoint>> Endpoint::Start(const core::Registry& registry, int port) {
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    exposer = std::make_unique<prometheus::Exposer>(CivetOptions(port));
  } catch (const std::exception& e) {  // CivetServer throws when it cannot listen
    return core::Unavailable("port " + std::to_string(port) + " cannot be bound (" + e.what() +
                             ")");
  }
  // civetweb takes the URI as a prefix pattern: `$` keeps /metricsx a 404.
  exposer->RegisterCollectable(registry.collectable(), "/metrics$");
  return std::unique_ptr<Endpoint>(new Endpoint(std::move(exposer)));
}

Endpoint::Endpoint(std::unique_ptr<prometheus::Exposer> exposer) : exposer_(std::move(exposer)) {}
Endpoint::~Endpoint() = default;

Pusher::Pusher(const core::Registry& registry, PushTarget target, const std::string& pod,
               int local_rank, double period_seconds) {
  // Shared with the thread, which may outlive this object (a gateway that never answers).
  auto gateway = std::make_shared<prometheus::Gateway>(
      target.host, target.port, "ccltune-program",
      prometheus::Labels{{"pod", Segment(pod)}, {"local_rank", std::to_string(local_rank)}});
  gateway->RegisterCollectable(registry.collectable());
  thread_ = std::make_unique<StoppableThread>(
      [gateway, url = target.url, period_seconds](const StopSignal& stop) {
        PushLoop(stop, *gateway, url, std::chrono::duration<double>(period_seconds));
      });
}

Pusher::~Pusher() { Stop(std::chrono::steady_clock::now()); }

void Pusher::Stop(std::chrono::steady_clock::time_point deadline) {
  if (thread_ != nullptr) thread_->Stop(deadline);
}

}  // namespace ccltune::telemetry

#include "worker/metrics/metrics_exposer.h"

#include <arpa/inet.h>

#include <exception>

#include "prometheus/exposer.h"
#include "worker/metrics/port_probe.h"

namespace ccltune::worker {
namespace {

std::vector<std::string> CivetOptions(const MetricsExposer::Options& o) {
  // clang-format off
  return {"listening_ports", o.bind_address + ":" + std::to_string(o.port),
          "num_threads", std::to_string(MetricsExposer::kThreads),
          "request_timeout_ms", std::to_string(MetricsExposer::kRequestTimeoutMs),
          "max_request_size", std::to_string(MetricsExposer::kMaxRequestBytes),
          "listen_backlog", std::to_string(MetricsExposer::kListenBacklog),
          "enable_keep_alive", "no",
          // The Exposer writes its head and body apart: no Nagle wait between them.
          "tcp_nodelay", "1"};
  // clang-format on
}

}  // namespace

core::Result<std::unique_ptr<MetricsExposer>> MetricsExposer::Start(const core::Registry& registry,
                                                                    const Options& options) {
  in_addr parsed{};
  // civetweb reports a bad address and a taken port alike, in words of its own; tell them
  // apart first, and name the port.
  if (inet_pton(AF_INET, options.bind_address.c_str(), &parsed) != 1)
    return core::InvalidArgument("metrics bind address '" + options.bind_address +
                                 "' is not an IPv4 address");
  if (options.port != 0) CCLTUNE_RETURN_IF_ERROR(CheckPortFree(options.bind_address, options.port));
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    exposer = std::make_unique<prometheus::Exposer>(CivetOptions(options));
  } catch (const std::exception& e) {  // CivetServer throws when it cannot listen
    return core::Unavailable("metrics server " + options.bind_address + ":" +
                             std::to_string(options.port) + ": " + e.what());
  }
  // civetweb takes the URI as a prefix pattern: `$` keeps /metricsx a 404.
  exposer->RegisterCollectable(registry.collectable(), "/metrics$");
  std::vector<int> ports = exposer->GetListeningPorts();
  if (ports.empty()) return core::Internal("metrics server: civetweb reports no port");
  return std::unique_ptr<MetricsExposer>(new MetricsExposer(std::move(exposer), ports.front()));
}

MetricsExposer::MetricsExposer(std::unique_ptr<prometheus::Exposer> exposer, int port)
    : exposer_(std::move(exposer)), port_(port) {}

MetricsExposer::~MetricsExposer() = default;

}  // namespace ccltune::worker

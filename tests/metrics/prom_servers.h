// Real Prometheus and Pushgateway servers for tests: Debian's `prometheus` and
// `prometheus-pushgateway`, on free loopback ports, with data in a temp dir, started with a
// readiness deadline (GET /-/ready) and killed on destruction.
#pragma once

#include <memory>
#include <string>

#include "core/base/status.h"
#include "tests/metrics/child_process.h"
#include "tests/support/temp_dir.h"

namespace ccltune::testing {

struct PromServer {
  std::unique_ptr<ChildProcess> process;
  int port = 0;
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
};

// `dir` holds the server's log and data; it must outlive the server.
core::Result<PromServer> StartPushgateway(const TempDir& dir);
// `config_yaml` is written to dir/prometheus.yml.
core::Result<PromServer> StartPrometheus(const TempDir& dir, const std::string& config_yaml);

}  // namespace ccltune::testing

#include "tests/metrics/prom_servers.h"

#include <fstream>
#include <thread>

#include "tests/support/free_port.h"

namespace ccltune::testing {
namespace {

using Clock = std::chrono::steady_clock;

core::Status WaitReady(PromServer& server, const std::string& name) {
  auto deadline = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < deadline) {
    if (server.process->Exited())
      return core::Unavailable(name + " exited early: " + server.process->LogTail());
    auto answer = HttpGet(server.port, "/-/ready", std::chrono::milliseconds(500));
    if (answer.ok() && answer->code == 200) return core::Status::Ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return core::TimeoutError(name + " not ready within 30 s: " + server.process->LogTail());
}

// A free port can be taken between FreePort() and the server's bind: retry a few times.
template <class ArgsFn>
core::Result<PromServer> StartWithRetry(const std::string& name, const std::string& log,
                                        ArgsFn args_for_port) {
  core::Status last = core::Internal(name + ": not started");
  for (int attempt = 0; attempt < 3; ++attempt) {
    PromServer server;
    server.port = FreePort();
    if (server.port == 0) return core::Internal("no free port");
    auto child = ChildProcess::Spawn(args_for_port(server.port), log);
    if (!child.ok()) return child.status();
    server.process = std::move(child).value();
    last = WaitReady(server, name);
    if (last.ok()) return server;
  }
  return last;
}

}  // namespace

core::Result<PromServer> StartPushgateway(const TempDir& dir) {
  return StartWithRetry("prometheus-pushgateway", dir.File("pushgateway.log"), [&](int port) {
    return std::vector<std::string>{"prometheus-pushgateway",
                                    "--web.listen-address=127.0.0.1:" + std::to_string(port)};
  });
}

core::Result<PromServer> StartPrometheus(const TempDir& dir, const std::string& config_yaml) {
  std::ofstream(dir.File("prometheus.yml")) << config_yaml;
  return StartWithRetry("prometheus", dir.File("prometheus.log"), [&](int port) {
    return std::vector<std::string>{"prometheus", "--config.file=" + dir.File("prometheus.yml"),
                                    "--storage.tsdb.path=" + dir.File("data"),
                                    "--web.listen-address=127.0.0.1:" + std::to_string(port),
                                    "--log.level=warn"};
  });
}

}  // namespace ccltune::testing

// The telemetry library's settings, read once from the environment (docs/design.md §13,
// docs/metrics.md "Programs"). Every bad value gives one Status that names the variable and
// what it allows; the caller prints them and leaves telemetry off, and the program runs on.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/redis/redis_client.h"

namespace ccltune::telemetry {

// Where prometheus::Gateway(host, port, ...) pushes: host = "http[s]://name", port = the port
// and any path prefix ("9091/gw"), since the Gateway builds "<host>:<port>/metrics/job/...".
struct PushTarget {
  std::string url;  // as given, for messages
  std::string host;
  std::string port;
};

struct TelemetrySettings {
  bool enabled = false;             // CCLTUNE_TELEMETRY
  int metrics_port = 9464;          // CCLTUNE_METRICS_PORT: the base; 0 = no endpoint
  std::optional<int> local_rank;    // LOCAL_RANK, SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK
  std::optional<PushTarget> push;   // CCLTUNE_PUSHGATEWAY
  double push_seconds = 15;         // CCLTUNE_TELEMETRY_PUSH_SECONDS
  std::size_t queue_calls = 65536;  // CCLTUNE_TELEMETRY_QUEUE
  std::optional<core::RedisEndpoint> redis;  // CCLTUNE_REDIS_URL (+ _USERNAME, _PASSWORD)
  std::string pod_namespace;                 // CCLTUNE_POD_NAMESPACE ("" = label omitted)
  std::string pod_name;                      // CCLTUNE_POD_NAME
  std::string node_name;                     // CCLTUNE_NODE_NAME
};

// getenv, or a test's table. Returns nullptr for an unset variable.
using EnvLookup = std::function<const char*(const char*)>;

// The settings. Each bad value appends one Status to `errors` and leaves `enabled` false.
// With CCLTUNE_TELEMETRY unset or off, the other variables are not read: off costs nothing.
TelemetrySettings ReadTelemetrySettings(const EnvLookup& env, std::vector<core::Status>* errors);

// "http[s]://host[:port][/prefix]"; InvalidArgument naming the problem otherwise.
core::Result<PushTarget> ParsePushTarget(const std::string& url);

}  // namespace ccltune::telemetry

// One rank of a tuning attempt, from Redis connection to publish: what `ccltune worker`
// runs in a pod and what `ccltune tune` spawns N times locally.
#pragma once

#include <string>

#include "core/base/status.h"
#include "core/plan/plan.h"
#include "core/redis/redis_client.h"

namespace ccltune::worker {

struct RankConfig {
  std::string job_id;
  int attempt = 0;
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string backend = "host";  // "host" | "nccl"
  core::RedisEndpoint redis;
  core::Plan plan;
  bool publish = true;
  std::string listen_host = "127.0.0.1";  // host backend: address peers connect to
  int metrics_port = -1;                  // < 0: no /metrics server
  std::string metrics_bind = "127.0.0.1";
  std::string pushgateway;            // "" = no push at the end
  double metrics_linger_seconds = 0;  // keep /metrics up this long after the end
  std::string report_file;            // rank 0 also writes the summary JSON here
  std::string node_name;  // --node-name; empty: CCLTUNE_NODE_NAME, host name (rank_node.h)
  std::string plan_file;  // where `plan` came from: a process setting's processes read it too
  // --measure-setting: this is one of a process setting's own rank processes
  // (process_settings.h); empty: a rank of the job itself.
  std::string measure_setting;
};

// Runs the rank; returns the process exit code (0 ok, 2 bad input, 1 any other failure)
// after printing one clear line for a failure.
int RunRank(const RankConfig& config);

}  // namespace ccltune::worker

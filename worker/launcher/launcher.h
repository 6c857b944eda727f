// `ccltune tune`: a whole tuning job on this machine (docs/design.md §9): private Redis unless one
// is given, N rank processes of this same binary, a progress line, the table, --json.
// Ends within a bound when cancelled (SIGINT/SIGTERM/SIGHUP: job marked cancelled, ranks and
// private Redis stopped, exit 128+signal) or when Redis stays unreachable for
// kRedisLostAfterSeconds (exit 1 naming Redis, its URL and what was being done).
// Also the pod supervisor of `ccltune worker` when a pod holds several ranks.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/plan/plan.h"
#include "core/redis/redis_client.h"
#include "worker/launcher/child_process.h"

namespace ccltune::worker {

struct TuneOptions {
  int ranks = 4;
  std::string backend = "host";
  core::Plan plan;
  std::optional<core::RedisEndpoint> redis;  // none: start the private redis-server
  std::string cache_dir;                     // private Redis data and job files
  std::string json_file;
  std::string job_id;  // empty: a random one
  bool verbose = false;  // every choice under each size, and the ranks' debug lines
  bool publish = true;
  int metrics_port_base = -1;         // rank r serves /metrics on base + r
  double metrics_linger_seconds = 0;  // ranks keep /metrics up this long at the end
  std::string pushgateway;
};

// Returns the exit code: 0 success, 1 failure (one clear line printed on stderr).
int RunTune(const TuneOptions& options);

// Arguments common to every rank's `ccltune worker` command line.
struct RankLaunch {
  std::string job_id;
  int attempt = 0;
  int world_size = 1;
  std::string backend;
  std::string redis_url;  // without password: that travels in CCLTUNE_REDIS_PASSWORD
  std::string redis_password;
  std::string plan_file;
  int metrics_port_base = -1;  // the i-th spawned rank serves /metrics on base + i
  std::string pushgateway;
  bool publish = true;
  double metrics_linger_seconds = 0;
  std::string node_name;  // CCLTUNE_NODE_NAME for the ranks; empty: inherited
  // The flag that gave metrics_port_base, named when a rank's port is taken.
  std::string metrics_port_flag = "--metrics-port-base";
  // The ranks log their debug lines too (CCLTUNE_LOG_LEVEL=debug, unless the user set it).
  bool debug_log = false;
};

// Spawns `ccltune worker` for the given ranks (local_rank = index in `ranks`). A rank whose
// /metrics port is taken gets none, with one line on stderr naming the flag, the port and the
// rank: /metrics is ancillary, the tuning goes on.
core::Result<std::vector<ChildProcess>> SpawnRanks(const RankLaunch& launch,
                                                   const std::vector<int>& ranks,
                                                   const std::string& report_file);

// How long stopped ranks get between SIGTERM and SIGKILL.
inline constexpr double kStopGraceSeconds = 5;

// Waits for every child. After the first failure the others get `grace_seconds` to end on
// their own (they notice through Redis), then are killed. `stop_requested` (optional) runs
// every 20 ms; true stops every rank now (SIGTERM, SIGKILL after kStopGraceSeconds).
// Returns the first non-zero code.
int SuperviseRanks(std::vector<ChildProcess>& children, const std::vector<int>& ranks,
                   double grace_seconds, const std::function<bool()>& stop_requested);

std::string RandomJobId();

}  // namespace ccltune::worker

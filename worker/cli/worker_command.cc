#include <memory>

#include "core/node/node_name.h"
#include "core/plan/plan.h"
#include "worker/cli/commands.h"
#include "worker/env_switches.h"
#include "worker/launcher/launcher.h"
#include "worker/launcher/local_redis.h"
#include "worker/rank/rank_main.h"

namespace ccltune::worker::cli {
namespace {

// Flags, each with the env variable a pod sets (docs/design.md §6).
struct WorkerFlags {
  int rank = -1;
  int local_rank = -1;
  int world_size = 0;
  int pod_index = 0;
  int ranks_per_pod = 1;
  int attempt = 0;
  std::string job_id;
  std::string backend = "host";
  std::string redis;
  std::string plan_file;
  std::string report_file;
  std::string listen_host = "127.0.0.1";
  int metrics_port = -1;
  std::string metrics_bind = "0.0.0.0";
  std::string pushgateway;
  double metrics_linger = 0;
  bool no_publish = false;
  std::string node_name;        // CCLTUNE_NODE_NAME: the pod's spec.nodeName (downward API)
  std::string measure_setting;  // a process setting's own rank process (rank/process_settings.h)
};

core::Status CheckFlags(const WorkerFlags& f) {
  if (f.job_id.empty()) return core::InvalidArgument("--job-id (CCLTUNE_JOB_ID) is required");
  if (f.world_size < 1)
    return core::InvalidArgument("--world-size (CCLTUNE_WORLD_SIZE) must be >= 1");
  if (f.rank >= f.world_size)
    return core::InvalidArgument("--rank " + std::to_string(f.rank) +
                                 " is not below --world-size " + std::to_string(f.world_size));
  if (f.backend != "host" && f.backend != "nccl")
    return core::InvalidArgument("--backend (CCLTUNE_BACKEND): '" + f.backend +
                                 "' is not one of nccl, host");
  if (f.plan_file.empty()) return core::InvalidArgument("--plan (CCLTUNE_PLAN_FILE) is required");
  if (f.world_size % f.ranks_per_pod != 0)
    return core::InvalidArgument("CCLTUNE_RANKS_PER_POD must divide CCLTUNE_WORLD_SIZE");
  if (!f.measure_setting.empty() && f.rank < 0)
    return core::InvalidArgument("--measure-setting needs --rank");
  if (!f.node_name.empty())
    return core::CheckNodeName(f.node_name, "--node-name (CCLTUNE_NODE_NAME)");
  return core::Status::Ok();
}

// A pod with several ranks (gpusPerPod > 1): run each as its own process and supervise.
int RunPodRanks(const WorkerFlags& f, const core::RedisEndpoint& ep, const core::Plan& plan) {
  std::vector<int> ranks;
  for (int i = 0; i < f.ranks_per_pod; ++i) ranks.push_back(f.pod_index * f.ranks_per_pod + i);
  core::RedisEndpoint no_password = ep;
  no_password.password.clear();
  RankLaunch l{f.job_id,         f.attempt,   f.world_size,   f.backend,     no_password.ToString(),
               ep.password,      f.plan_file, f.metrics_port, f.pushgateway, !f.no_publish,
               f.metrics_linger, f.node_name};
  l.metrics_port_flag = "--metrics-port (CCLTUNE_METRICS_PORT)";
  auto children = SpawnRanks(l, ranks, f.report_file);
  if (!children.ok()) return UsageError(children.status().message());
  return SuperviseRanks(*children, ranks, plan.benchmark.choice_timeout_seconds + 10, nullptr);
}

int RunWorkerCommand(WorkerFlags& f) {
  if (auto st = CheckFlags(f); !st.ok()) return UsageError(st.message());
  if (auto st = CheckEnvSwitches(); !st.ok()) return UsageError(st.message());
  auto ep = RedisFlagEndpoint(f.redis);
  if (!ep.ok()) return UsageError(ep.status().message());
  auto plan = core::LoadPlanFile(f.plan_file);
  if (!plan.ok()) return UsageError(plan.status().message());  // it names the file
  if (auto st = core::CheckEmulatedNodes(plan->emulated_nodes, f.world_size,
                                         f.plan_file + ": emulatedNodes");
      !st.ok())
    return UsageError(st.message());
  if (f.rank < 0 && f.ranks_per_pod > 1) return RunPodRanks(f, *ep, *plan);
  RankConfig cfg;
  cfg.job_id = f.job_id;
  cfg.attempt = f.attempt;
  cfg.rank = f.rank >= 0 ? f.rank : f.pod_index;
  cfg.local_rank = f.local_rank >= 0 ? f.local_rank : 0;
  cfg.world_size = f.world_size;
  cfg.backend = f.backend;
  cfg.redis = *ep;
  cfg.plan = *plan;
  // Figures from a cached buffer set are for comparing with nccl-tests, not for jobs to use.
  cfg.publish = !f.no_publish && BufferRotationOn();
  cfg.listen_host = f.listen_host;
  cfg.metrics_port = f.metrics_port;
  cfg.metrics_bind = f.metrics_bind;
  cfg.pushgateway = f.pushgateway;
  cfg.metrics_linger_seconds = f.metrics_linger;
  cfg.report_file = f.report_file;
  cfg.node_name = f.node_name;
  cfg.plan_file = f.plan_file;
  cfg.measure_setting = f.measure_setting;
  return RunRank(cfg);
}

}  // namespace

Runner AddWorkerCommand(CLI::App& app) {
  auto f = std::make_shared<WorkerFlags>();
  auto* c = app.add_subcommand("worker", "Run one rank (what a pod runs); flags fall back to env");
  c->add_option("--rank", f->rank, "Global rank (default: from the pod index)")
      ->check(CLI::Range(0, 65535));
  c->add_option("--local-rank", f->local_rank, "Rank within the pod (GPU index)")
      ->check(CLI::Range(0, 1023));
  c->add_option("--world-size", f->world_size, "Ranks in total")
      ->envname("CCLTUNE_WORLD_SIZE")
      ->check(CLI::Range(1, 65536));
  c->add_option("--pod-index", f->pod_index)
      ->envname("CCLTUNE_POD_INDEX")
      ->check(CLI::Range(0, 65535));
  c->add_option("--ranks-per-pod", f->ranks_per_pod)
      ->envname("CCLTUNE_RANKS_PER_POD")
      ->check(CLI::Range(1, 1024));
  c->add_option("--job-id", f->job_id)->envname("CCLTUNE_JOB_ID");
  c->add_option("--attempt", f->attempt)->envname("CCLTUNE_ATTEMPT")->check(CLI::Range(0, 1000));
  c->add_option("--backend", f->backend)->envname("CCLTUNE_BACKEND");
  c->add_option("--redis", f->redis)->envname("CCLTUNE_REDIS_URL")->required();
  c->add_option("--plan", f->plan_file)->envname("CCLTUNE_PLAN_FILE");
  c->add_option("--report", f->report_file, "Rank 0 writes the attempt summary JSON here");
  c->add_option("--listen-host", f->listen_host, "Address peers reach this rank on (host backend)")
      ->envname("CCLTUNE_POD_IP");
  c->add_option("--metrics-port", f->metrics_port, "Serve /metrics on this port")
      ->envname("CCLTUNE_METRICS_PORT")
      ->check(CLI::Range(1, 65535));
  c->add_option("--metrics-bind", f->metrics_bind, "Address of the /metrics server");
  c->add_option("--pushgateway", f->pushgateway)->envname("CCLTUNE_PUSHGATEWAY");
  c->add_option("--metrics-linger", f->metrics_linger,
                "Keep /metrics up this many seconds after the end (for a last scrape)")
      ->check(CLI::Range(0.0, 600.0));
  c->add_flag("--no-publish", f->no_publish, "Do not publish winners");
  c->add_option("--node-name", f->node_name,
                "This rank's node (a pod: spec.nodeName; default: NCCL_HOSTID, else the host "
                "name)")
      ->envname("CCLTUNE_NODE_NAME");
  c->add_option("--measure-setting", f->measure_setting,
                "Internal: be one of this process setting's own rank processes (a rank of the "
                "job starts them; e.g. nccl-net:socketThreads=4,socksPerThread=4)");
  return [f] { return RunWorkerCommand(*f); };
}

}  // namespace ccltune::worker::cli

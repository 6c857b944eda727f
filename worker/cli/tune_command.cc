#include <cstdio>
#include <cstdlib>
#include <memory>

#include "core/base/sizes.h"
#include "core/node/node_name.h"
#include "core/plan/plan.h"
#include "worker/cli/commands.h"
#include "worker/cli/plan_flags.h"
#include "worker/cli/tune_target.h"
#include "worker/env_switches.h"
#include "worker/launcher/launcher.h"
#include "worker/launcher/local_redis.h"

namespace ccltune::worker::cli {
namespace {

struct TuneFlags {
  int ranks = 0;
  std::string backend = "auto";
  std::string redis;
  std::string max_bytes = "1GiB";
  PlanFlags plan;
  TuneOptions options;
};

TuneAsked Asked(const TuneFlags& f) {
  return TuneAsked{f.backend, f.ranks, f.plan.cuda_graph, f.plan.plan_file};
}

// The plan with every flag applied, and the backend and ranks it runs on (tune_target.h).
core::Status ResolvePlan(const TuneFlags& f, TuneOptions& o) {
  core::PlanLimits limits;
  auto cap = core::ParseSize(f.max_bytes);
  if (!cap.ok()) return cap.status().WithContext("--max-bytes");
  limits.max_bytes = *cap;
  CCLTUNE_ASSIGN_OR_RETURN(auto base, LoadPlanFlag(f.plan, limits));
  const core::JobTarget job = base ? base->job : core::JobTarget{};
  std::string why_host;
  CCLTUNE_ASSIGN_OR_RETURN(o.backend, ResolveBackend(Asked(f), job, &why_host));
  CCLTUNE_ASSIGN_OR_RETURN(o.plan, BuildPlan(f.plan, base, o.backend, limits));
  CCLTUNE_RETURN_IF_ERROR(CheckCudaGraph(Asked(f), o.plan, o.backend, why_host));
  CCLTUNE_ASSIGN_OR_RETURN(o.ranks, ResolveRanks(Asked(f), job, o.backend));
  return core::Status::Ok();
}

int RunTuneCommand(TuneFlags& f) {
  if (auto st = CheckEnvSwitches(); !st.ok()) return UsageError(st.message());
  TuneOptions o = f.options;
  if (auto st = ResolvePlan(f, o); !st.ok()) return UsageError(st.message());
  if (!BufferRotationOn()) {  // the ranks see it too, and publish nothing
    std::fprintf(stderr,
                 "ccltune tune: %s=0: measuring from one cached buffer set; nothing "
                 "is published\n",
                 kBufferRotationEnv);
  }
  // The ranks check both too; here each is one line before any rank starts, naming its source.
  if (auto node = core::LocalNodeName(); !node.ok()) return UsageError(node.status().message());
  if (auto st = core::CheckEmulatedNodes(
          o.plan.emulated_nodes, o.ranks,
          f.plan.emulate_nodes ? "--emulate-nodes" : "emulatedNodes (plan file)");
      !st.ok())
    return UsageError(st.message());
  if (!f.redis.empty()) {
    auto ep = RedisFlagEndpoint(f.redis);
    if (!ep.ok()) return UsageError(ep.status().message());
    o.redis = *ep;
  }
  if (o.cache_dir.empty()) o.cache_dir = DefaultCacheDir();
  return RunTune(o);
}

}  // namespace

Runner AddTuneCommand(CLI::App& app) {
  auto f = std::make_shared<TuneFlags>();
  auto* c = app.add_subcommand("tune", "Run a whole tuning job on this machine");
  c->add_option("--ranks", f->ranks,
                "Rank processes (default: a job file's spec.worldSize, else GPUs for nccl, 4 for "
                "host)")
      ->check(CLI::Range(1, kMaxLocalRanks));
  c->add_option("--backend", f->backend,
                "auto | nccl | host (default auto: a job file's spec.backend, else nccl where "
                "GPUs and NCCL are, else host)");
  c->add_option("--plan", f->plan.plan_file, "Plan file (YAML or JSON; a CollectiveTuningJob too)");
  c->add_option("--op", f->plan.ops, "Collectives, comma-separated (allReduce,allGather,...)");
  c->add_option("--dtypes", f->plan.dtypes, "Element types, comma-separated (fp32,bf16,...)");
  c->add_option("--redop", f->plan.redop,
                "Reduction of allReduce and reduceScatter: sum (default), max, min, prod, avg");
  c->add_option("--sizes", f->plan.sizes, "MIN:MAX[:FACTOR] or a list (4096,1MiB)");
  c->add_option("--epilogue", f->plan.epilogue,
                "Fuse after allReduce: KIND[,hidden=H][,eps=E] (residualRmsNorm, bias, none)");
  c->add_option("--tokens", f->plan.tokens,
                "Rows of an epilogue problem: MIN:MAX[:FACTOR] or a list (1,8,32,128)");
  c->add_option("--choices", f->plan.choices, "Choices to measure, comma-separated (default all)");
  c->add_option("--search", f->plan.search,
                "adaptive (default: screen, then full rounds only for choices that can still "
                "win) | exhaustive (every choice in full)");
  c->add_option("--iters", f->plan.iters, "Ops per timed round")->check(CLI::Range(1, 100000));
  c->add_option("--rounds", f->plan.rounds, "Timed rounds")->check(CLI::Range(1, 1000));
  c->add_option("--warmup", f->plan.warmup, "Warm-up ops")->check(CLI::Range(0, 100000));
  c->add_option("--choice-timeout", f->plan.choice_timeout, "Seconds one choice may take")
      ->check(CLI::Range(0.1, 86400.0));
  c->add_option("--presync-window", f->plan.presync_window, "Pre-sync window in seconds")
      ->check(CLI::Range(0.01, 3600.0));
  c->add_option("--rendezvous-timeout", f->plan.rendezvous_timeout, "Seconds to wait for ranks")
      ->check(CLI::Range(0.1, 86400.0));
  c->add_option("--emulate-nodes", f->plan.emulate_nodes,
                "Split the ranks into N emulated nodes on this machine (NCCL joins them over "
                "sockets on loopback); N divides --ranks")
      ->check(CLI::Range(0, 1024));
  c->add_flag("--cuda-graph", f->plan.cuda_graph, "Time CUDA graphs of the iterations (nccl)");
  c->add_option("--max-bytes", f->max_bytes, "Largest message size accepted (default 1GiB)");
  c->add_option("--redis", f->redis, "Shared Redis URL (default: a private redis-server)");
  c->add_option("--json", f->options.json_file, "Write the job summary JSON here");
  c->add_option("--job-id", f->options.job_id, "Job id (default: random)");
  c->add_option("--cache-dir", f->options.cache_dir, "Private Redis data and job files");
  c->add_option("--metrics-port-base", f->options.metrics_port_base,
                "Rank r serves /metrics on this port + r")
      ->check(CLI::Range(1, 65000));
  c->add_option("--pushgateway", f->options.pushgateway, "Push final metrics here (http://...)");
  c->add_option("--metrics-linger", f->options.metrics_linger_seconds,
                "Ranks keep /metrics up this many seconds after the end (a last scrape)")
      ->check(CLI::Range(0.0, 600.0));
  c->add_flag("--verbose,-v", f->options.verbose, "Show every choice under each size");
  c->add_flag(
      "--no-publish", [f](std::int64_t) { f->options.publish = false; },
      "Do not publish winners to the shared cache");
  return [f] { return RunTuneCommand(*f); };
}

}  // namespace ccltune::worker::cli

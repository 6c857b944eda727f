#include "worker/rank/rank_main.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <optional>
#include <thread>

#include "core/base/log.h"
#include "core/node/fingerprint.h"
#include "core/node/node_name.h"
#include "core/plan/choice.h"
#include "core/plan/problem.h"
#include "core/redis/job_keys.h"
#include "core/results/result_store.h"
#include "worker/env_switches.h"
#include "worker/launcher/redis_login.h"
#include "worker/metrics/metrics_exposer.h"
#include "worker/metrics/metrics_push.h"
#include "worker/metrics/worker_metrics.h"
#include "worker/rank/attempt_summary.h"
#include "worker/rank/backend_factory.h"
#include "worker/rank/bench_runner.h"
#include "worker/rank/nccl_log_capture.h"
#include "worker/rank/process_settings.h"
#include "worker/rank/progress.h"
#include "worker/rank/rank_node.h"
#include "worker/rank/termination_message.h"
#include "worker/rendezvous/job_control.h"
#include "worker/rendezvous/poll.h"
#include "worker/rendezvous/rendezvous.h"

namespace ccltune::worker {
namespace {

using core::Status;

// Keeps what the summary needs from the run's events.
class StatsObserver final : public BenchObserver {
 public:
  void OnPreSync(double wait, double skew) override {
    stats.presync_wait_s = wait;
    stats.presync_skew_s = skew;
  }
  void OnBarrier(double seconds) override { stats.barrier_s.push_back(seconds); }
  RankStats stats;
};

std::string NowRfc3339() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// Test hook (integration tests only): hold this rank back before the pre-sync window.
void MaybeDelayForTest(int rank) {
  const char* r = std::getenv("CCLTUNE_TEST_PRESYNC_DELAY_RANK");
  const char* s = std::getenv("CCLTUNE_TEST_PRESYNC_DELAY_SECONDS");
  if (r && s && std::atoi(r) == rank)
    std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(s)));
}

struct Attempt {
  const RankConfig& cfg;
  core::RedisClient& redis;
  JobControl& control;
  core::JobKeys keys;
  Rendezvous rendezvous;
  std::vector<RankRecord> peers;
  std::vector<BenchObserver*> observers;  // metrics, when enabled
  WorkerMetrics* metrics = nullptr;
  std::string first_failure;           // the attempt's first failure, once this rank raised its own
  std::string node;                    // this rank's node (rank_node.h)
  NcclLogCapture* nccl_log = nullptr;  // nccl backend: NCCL's INFO log of this rank
  struct {
    SettingResults results;
    double seconds = 0;
  } settings;  // process settings' figures (process_settings.h)
};

// The job's process settings, each in rank processes of its own (none in those processes).
Status RunProcessSettings(Attempt& a, Backend& backend,
                          const std::vector<core::Problem>& problems) {
  if (!a.cfg.measure_setting.empty()) return Status::Ok();
  const auto t0 = Clock::now();
  SettingsLaunch launch{a.cfg, a.node, {}};
  if (a.nccl_log != nullptr) launch.unset_env = a.nccl_log->SetVariables();
  CCLTUNE_ASSIGN_OR_RETURN(
      a.settings.results,
      MeasureProcessSettings(launch, backend, a.rendezvous, a.control, a.redis, problems));
  a.settings.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return Status::Ok();
}

// This rank's NCCL log into its end-of-run stats (Finish gathers them).
void AddNcclLog(Attempt& a, RankStats& stats) {
  if (a.nccl_log == nullptr) return;
  core::Result<core::NcclInitLog> log = a.nccl_log->Read();
  if (log.ok())
    stats.nccl_log = log->ToJson();
  else
    stats.nccl_log_problem = log.status().message();
}

std::vector<std::string> NodeOfRank(const std::vector<RankRecord>& peers) {
  std::vector<std::string> nodes;
  for (const auto& r : peers) nodes.push_back(r.node);
  return nodes;
}

// This rank's entry in the attempt's failure record: "rank N: message".
std::string FailureLine(int rank, const Status& st) {
  return "rank " + std::to_string(rank) + ": " + st.message();
}

// Raises this rank's failure (first one wins across ranks) and keeps the first.
void RaiseFailure(Attempt& a, const Status& st) {
  a.first_failure = a.control.RaiseFailure(FailureLine(a.cfg.rank, st));
}

// The rank's Prometheus side (docs/design.md §7): families, the /metrics server, the final push.
struct RankMetrics {
  core::Registry registry;
  std::unique_ptr<WorkerMetrics> metrics;
  std::unique_ptr<MetricsExposer> server;
};

core::Result<std::unique_ptr<RankMetrics>> StartMetrics(const RankConfig& cfg) {
  auto m = std::make_unique<RankMetrics>();
  if (cfg.metrics_port < 0 && cfg.pushgateway.empty()) return m;
  CCLTUNE_ASSIGN_OR_RETURN(m->metrics, WorkerMetrics::Create(m->registry, {cfg.job_id, cfg.rank}));
  if (cfg.metrics_port >= 0) {
    core::Result<std::unique_ptr<MetricsExposer>> server =
        MetricsExposer::Start(m->registry, {cfg.metrics_bind, cfg.metrics_port});
    if (server.ok()) {
      m->server = std::move(server).value();
    } else if (server.status().code() == core::StatusCode::kUnavailable) {
      // A taken port costs this rank its /metrics, not the tuning job; a Pushgateway push
      // (when configured) still carries the figures.
      core::LogWarn("--metrics-port " + std::to_string(cfg.metrics_port) + ": " +
                    server.status().message() + "; this rank serves no /metrics");
    } else {
      return server.status();
    }
  }
  return m;
}

void FinishMetrics(const RankConfig& cfg, RankMetrics& m) {
  if (!m.metrics) return;
  if (!cfg.pushgateway.empty()) {
    auto st = PushMetrics(cfg.pushgateway, cfg.job_id, cfg.rank, m.registry, 5);
    if (!st.ok()) core::LogWarn("pushgateway: " + st.ToString());
  }
  if (m.server && cfg.metrics_linger_seconds > 0)
    std::this_thread::sleep_for(std::chrono::duration<double>(cfg.metrics_linger_seconds));
}

core::FingerprintInput FingerprintOf(const Backend& backend, const std::vector<RankRecord>& p) {
  core::FingerprintInput in = backend.FingerprintInfo();
  const core::NodeShape shape = core::ShapeOfNodes(NodeOfRank(p));
  in.nodes = shape.nodes;
  in.gpus_per_node = shape.gpus_per_node;
  return in;
}

void StampRecords(std::vector<core::ResultRecord>& records, const std::string& fp,
                  const RankConfig& cfg) {
  const std::string now = NowRfc3339();
  for (auto& r : records) {
    r.fingerprint = fp;
    r.tuned_at = now;
    r.job_id = cfg.job_id;
    r.attempt = cfg.attempt;
    r.tool_version = CCLTUNE_VERSION;
  }
}

// Rank 0 only, after every rank finished: one atomic publish, then the summary.
Status PublishAndSummarize(Attempt& a, const Backend& backend,
                           std::vector<core::ResultRecord> records, nlohmann::json summary) {
  const auto fp_in = FingerprintOf(backend, a.peers);
  const std::string fp = core::Fingerprint(fp_in);
  StampRecords(records, fp, a.cfg);
  std::vector<core::ResultRecord> winners;
  nlohmann::json all = nlohmann::json::array(), unresolved = nlohmann::json::array();
  for (const auto& r : records) {
    all.push_back(core::ToJson(r));
    if (r.winner.empty())
      unresolved.push_back(r.Key());
    else
      winners.push_back(r);
  }
  CCLTUNE_RETURN_IF_ERROR(a.control.Fatal());
  if (a.cfg.publish) {
    core::ResultStore store(a.redis);
    // Guarded: a job cancelled meanwhile (tune's SIGTERM, the resource deleted) or failed on
    // another rank publishes nothing, decided atomically with the publish itself.
    a.control.SetActivity("publishing " + std::to_string(winners.size()) + " winners");
    CCLTUNE_RETURN_IF_ERROR(store
                                .Publish(fp, core::CanonicalFingerprintJson(fp_in), winners,
                                         {a.keys.Cancelled(), a.keys.Failure()})
                                .WithContext("publish"));
    auto marked = a.redis.Command({"SET", a.keys.Published(), fp, "EX", "86400"});
    if (!marked.ok()) return marked.status().WithContext("marking the attempt published");
  }
  summary["fingerprint"] = fp;
  summary["fingerprintInfo"] = core::FingerprintJson(fp_in);
  summary["problems"] = records.size();
  summary["published"] = a.cfg.publish ? winners.size() : 0;
  summary["bufferRotation"] = BufferRotationOn();
  summary["records"] = std::move(all);
  summary["unresolved"] = std::move(unresolved);
  const std::string text = summary.dump();
  a.control.SetActivity("writing the job's summary");
  auto w = a.redis.Command({"SET", a.keys.Summary(), text, "EX", "86400"});
  if (!w.ok()) return w.status().WithContext("writing the summary");
  if (!a.cfg.report_file.empty()) std::ofstream(a.cfg.report_file) << summary.dump(2) << "\n";
  return Status::Ok();
}

// Everyone marks done; rank 0 waits for all marks, then publishes. Nothing is published
// unless every rank got here.
Status Finish(Attempt& a, Backend& backend, std::vector<core::ResultRecord> records,
              const StatsObserver& stats, const TimingBreakdown& timing) {
  const Deadline deadline = DeadlineIn(a.cfg.plan.benchmark.choice_timeout_seconds + 5);
  a.control.SetActivity("the final exchange of the ranks' figures");
  CCLTUNE_RETURN_IF_ERROR(backend.Barrier(deadline).WithContext("final barrier"));
  RankStats mine = stats.stats;
  AddNcclLog(a, mine);
  CCLTUNE_ASSIGN_OR_RETURN(auto all_stats,
                           a.rendezvous.AllGather("stats", mine.ToJson().dump(), deadline));
  a.control.StopWatchingPeers();
  if (a.cfg.rank != 0) return Status::Ok();
  std::vector<RankStats> ranks;
  for (const auto& s : all_stats) ranks.push_back(RankStats::FromJson(nlohmann::json::parse(s)));
  nlohmann::json summary = PresyncAndBarrierJson(ranks);
  summary["schema"] = kSummarySchema;
  summary["jobId"] = a.cfg.job_id;
  summary["attempt"] = a.cfg.attempt;
  summary["backend"] = a.cfg.backend;
  summary["worldSize"] = a.cfg.world_size;
  summary["search"] = core::SearchName(a.cfg.plan.search);
  summary["nodeOfRank"] = NodeOfRank(a.peers);
  if (nlohmann::json t = NcclTopologyJson(ranks, NodeOfRank(a.peers)); !t.is_null())
    summary["ncclTopology"] = std::move(t);
  summary["timing"] = {{"commSetupS", timing.comm_setup},
                       {"presyncS", timing.presync},
                       {"barriersS", timing.barriers},
                       {"timedRunsS", timing.timed_runs},
                       // The sum of the next three, kept for readers of schema 1.
                       {"warmupVerifyS", timing.prepare + timing.warmup + timing.verify},
                       {"prepareS", timing.prepare},
                       {"warmupS", timing.warmup},
                       {"verifyS", timing.verify},
                       {"tuningS", timing.total},
                       {"screeningS", timing.screening},
                       {"fullS", timing.full},
                       {"processSettingsS", a.settings.seconds}};
  summary["processSettings"] = a.settings.results.ToJson();
  summary["screening"] = {{"screened", timing.screened}, {"pruned", timing.pruned}};
  return PublishAndSummarize(a, backend, std::move(records), std::move(summary));
}

// Everything between communicator setup and the summary, on a live backend.
Status RunWithBackend(Attempt& a, Backend& backend, TimingBreakdown setup) {
  const auto& bench = a.cfg.plan.benchmark;
  MaybeDelayForTest(a.cfg.rank);
  a.control.SetActivity("waiting in the pre-sync window");
  StatsObserver stats;
  auto t0 = Clock::now();
  std::vector<BenchObserver*> observers{&stats};
  observers.insert(observers.end(), a.observers.begin(), a.observers.end());
  auto presync = a.rendezvous.PreSync(bench.pre_sync_window_seconds,
                                      DeadlineIn(bench.pre_sync_window_seconds + 10));
  if (!presync.ok()) {
    if (presync.status().code() == core::StatusCode::kTimeout)
      for (auto* o : observers) o->OnPreSyncTimeout();
    return presync.status();
  }
  setup.presync = std::chrono::duration<double>(Clock::now() - t0).count();
  for (auto* o : observers) o->OnPreSync(presync->wait_seconds, presync->skew_seconds);
  const auto problems = core::ExpandPlan(a.cfg.plan);
  a.control.SetActivity("measuring process settings");
  CCLTUNE_RETURN_IF_ERROR(RunProcessSettings(a, backend, problems));
  std::unique_ptr<ProgressPublisher> progress;
  if (a.cfg.rank == 0) {
    progress = std::make_unique<ProgressPublisher>(a.redis, a.control, a.keys, problems.size());
    observers.push_back(progress.get());
  }
  BenchRunner runner(backend, a.control, a.rendezvous, bench, a.cfg.plan.search, observers);
  const std::string fp = core::Fingerprint(FingerprintOf(backend, a.peers));
  runner.set_fingerprint(fp);
  runner.set_process_settings(&a.settings.results);
  if (a.metrics) a.metrics->SetFingerprint(fp);
  CCLTUNE_ASSIGN_OR_RETURN(auto records, runner.Run(problems));
  TimingBreakdown timing = runner.timing();
  timing.comm_setup += setup.comm_setup;
  timing.presync = setup.presync;
  return Finish(a, backend, std::move(records), stats, timing);
}

Status RunAttempt(Attempt& a) {
  const auto& bench = a.cfg.plan.benchmark;
  a.control.SetActivity("joining the rendezvous");
  CCLTUNE_ASSIGN_OR_RETURN(a.peers,
                           a.rendezvous.Join(LocalRankRecord(a.cfg.rank, a.node),
                                             DeadlineIn(bench.rendezvous_timeout_seconds)));
  a.control.WatchPeers();
  TimingBreakdown setup;
  auto t0 = Clock::now();
  a.control.SetActivity("setting up the " + a.cfg.backend + " backend");
  BackendParams bp{a.cfg.backend, a.cfg.rank, a.cfg.world_size, a.cfg.local_rank,
                   a.cfg.listen_host};
  CCLTUNE_ASSIGN_OR_RETURN(auto backend,
                           CreateBackend(bp, a.rendezvous, a.control, bench,
                                         DeadlineIn(bench.rendezvous_timeout_seconds)));
  setup.comm_setup = std::chrono::duration<double>(Clock::now() - t0).count();
  Status st = RunWithBackend(a, *backend, setup);
  // Whatever call noticed it first, a lost cache is the cause to name (Redis, URL, activity).
  if (!st.ok() && a.control.RedisLost()) st = a.control.Fatal();
  // Raised while this rank's connections are still open: once they close, the peers see
  // this rank disconnect and could record that as the attempt's first failure, hiding the
  // cause (a rank killed mid-benchmark was then reported as "rank 0 disconnected").
  if (!st.ok()) RaiseFailure(a, st);
  return st;
}

}  // namespace

int RunRank(const RankConfig& config) {
  RankConfig cfg = config;
  const bool own_setting = !cfg.measure_setting.empty();
  core::InitLogging("rank " + std::to_string(cfg.rank) +
                    (own_setting ? " (" + cfg.measure_setting + ")" : std::string()));
  auto fail = [&](const Status& st) {
    const std::string line =
        "ccltune worker: rank " + std::to_string(cfg.rank) + ": error: " + st.message();
    std::fprintf(stderr, "%s\n", line.c_str());
    WriteTerminationMessage(line);  // in a pod: the job's Failed condition carries this line
    return st.code() == core::StatusCode::kInvalidArgument ? 2 : 1;
  };
  if (own_setting) {
    if (Status st = EnterSettingProcess(cfg); !st.ok()) return fail(st);
  }
  auto node = SetUpRankNode({cfg.node_name, cfg.plan.emulated_nodes, cfg.rank, cfg.world_size});
  if (!node.ok()) return fail(node.status());
  auto redis = ConnectCache(cfg.redis);
  if (!redis.ok()) return fail(redis.status());
  core::JobKeys keys(cfg.job_id, cfg.attempt);
  auto control = JobControl::Start(cfg.redis, keys, cfg.rank, cfg.world_size);
  if (!control.ok()) return fail(control.status());
  auto metrics = StartMetrics(cfg);
  if (!metrics.ok()) return fail(metrics.status().WithContext("metrics"));
  Attempt attempt{
      cfg, **redis, **control, keys, Rendezvous(**redis, keys, cfg.rank, cfg.world_size, **control),
      {},  {},      nullptr};
  attempt.metrics = (*metrics)->metrics.get();
  attempt.node = *node;
  std::optional<NcclLogCapture> nccl_log;
  if (cfg.backend == "nccl") {
    nccl_log.emplace(NcclLogCapture::Start(cfg.job_id, cfg.attempt, cfg.rank));
    attempt.nccl_log = &*nccl_log;
  }
  if (attempt.metrics) attempt.observers.push_back(attempt.metrics);
  Status st = RunAttempt(attempt);
  FinishMetrics(cfg, **metrics);
  if (st.ok()) return 0;
  // A lost peer often cascades (rank 1 sees rank 2 die and exits; rank 0 then sees rank 1
  // go): name the first failure of the attempt too, which is the root cause.
  if (attempt.first_failure.empty()) RaiseFailure(attempt, st);
  if (attempt.first_failure != FailureLine(cfg.rank, st))
    st = core::Status(st.code(),
                      st.message() + "; the attempt failed first on " + attempt.first_failure);
  return fail(st);
}

}  // namespace ccltune::worker

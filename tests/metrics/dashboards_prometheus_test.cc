// The tuning dashboards (Overview, Results) against real data: a real `prometheus` scrapes the rank
// processes of real local tuning jobs (`ccltune tune --backend host`, a real redis-server) and the
// controller's /metrics, and a real Pushgateway receives the ranks' final pushes; then every panel
// query of those dashboards, with its template variables filled from label_values() through the
// Prometheus API, must return at least one finite series.
// The host backend runs no epilogues (issue 16) and no GPU is here, so one more target serves
// the synthetic run (synthetic_run.h, WorkerMetrics fed like a 4-GPU rank) with its fused
// all-reduce + residualRmsNorm problems: its job id sorts first, so Grafana's first values
// show it; the real job is checked with its own $job too, where only the epilogue panels
// (titles "Epilogue: …") are empty.
// Also a static check of the dashboards: units on every panel, datasource variable, variables.
// The Programs dashboard: programs_dashboard_test.cc. Shared helpers: dashboard_queries.h.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>

#include "tests/metrics/child_process.h"
#include "tests/metrics/dashboard_queries.h"
#include "tests/metrics/prom_servers.h"
#include "tests/metrics/synthetic_run.h"
#include "tests/support/redis_server.h"
#include "tests/support/temp_dir.h"
#include "worker/launcher/child_process.h"
#include "worker/metrics/metrics_exposer.h"
#include "worker/metrics/worker_metrics.h"
#ifdef CCLTUNE_TEST_HAVE_CONTROLLER
#include "controller/metrics/metrics.h"
#endif

namespace ccltune::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr char kNamespace[] = "ccltune-test";  // what Kubernetes SD would attach to workers
const char* const kDashboards[] = {"ccltune-overview", "ccltune-results"};

// ---------------------------------------------------------------------------------------
// The tuning jobs that Prometheus watches: the real `ccltune tune` binary ($CCLTUNE_BIN) with
// two host-backend rank processes each, sharing one real redis-server.
//  - kTuneJob, healthy: allReduce and allGather, 1 KiB … 64 KiB. Its choice list names
//    `recursive-doubling`, which allGather does not have, so every allGather problem reports
//    it as a skipped choice (ccltune_choice_failures_total{reason="skipped"}).
//  - kPreSyncJob fails: rank 1 is held back (test hook of worker/rank/rank_main.cc) past a 0.5 s
//    pre-sync window, so rank 0 counts a ccltune_presync_timeouts_total and pushes it.
// Rank r serves /metrics on port_base + r; both jobs linger kLinger s after the end (so
// Prometheus, scraping every second, gets the final state) and push to the Pushgateway.
// The synthetic epilogue job's id sorts first, so Grafana's "first value" of $job is it.
constexpr char kEpilogueJob[] = "dash-0-synthetic-epilogue";
constexpr char kTuneJob[] = "dash-a-tune";
constexpr char kPreSyncJob[] = "dash-b-presync-timeout";
constexpr double kLinger = 6;

struct TuneProcess {
  std::string job_id;
  std::string log;  // its stdout and stderr
  std::optional<worker::ChildProcess> process;
};

core::Result<TuneProcess> StartTune(const std::string& job_id, int port_base,
                                    const std::string& redis_url, const std::string& pushgateway,
                                    const TempDir& dir, std::vector<std::string> extra_args,
                                    const std::map<std::string, std::string>& env) {
  const char* bin = std::getenv("CCLTUNE_BIN");
  if (!bin || !*bin) return core::FailedPrecondition("CCLTUNE_BIN is not set (run via ctest)");
  TuneProcess t{job_id, dir.File(job_id + ".log"), std::nullopt};
  // clang-format off
  std::vector<std::string> argv{
      bin, "tune", "--ranks", "2", "--backend", "host", "--redis", redis_url,
      "--cache-dir", dir.File("cache-" + job_id), "--job-id", job_id,
      "--op", "allReduce,allGather", "--sizes", "1KiB:64KiB:4",
      "--iters", "5", "--rounds", "3", "--warmup", "1",
      "--metrics-port-base", std::to_string(port_base), "--pushgateway", pushgateway,
      "--metrics-linger", std::to_string(kLinger)};
  // clang-format on
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  CCLTUNE_ASSIGN_OR_RETURN(auto child, worker::ChildProcess::Spawn(argv, env, t.log));
  t.process.emplace(std::move(child));
  return t;
}

// The controller's /metrics, for the panels over controller metrics (ccltune_jobs and the
// per-job ccltune_job_presync_wait_seconds; a real controller feeds them in
// tests/k8s/test_controller_metrics.py).
class ControllerExposition {
 public:
  core::Result<int> Start() {
#ifdef CCLTUNE_TEST_HAVE_CONTROLLER
    std::fprintf(stderr,
                 "controller panels: real ControllerMetrics families "
                 "(controller/metrics/metrics.cc), phase counts and one job's pre-sync wait set "
                 "by this test; no running controller\n");
    metrics_.SetJobsByPhase({{"Running", 1}, {"Succeeded", 3}});
    metrics_.SetJobPreSyncWait(kNamespace, kTuneJob, 0.0012);
    const core::Registry& registry = metrics_.registry();
#else
    std::fprintf(stderr,
                 "controller panels: STAND-IN exposition of ccltune_jobs{phase} and "
                 "ccltune_job_presync_wait_seconds{namespace,job} (ccltune-controller is not "
                 "built); replace with the real controller\n");
    auto jobs = registry_.AddGauge({"ccltune_jobs", "Jobs by phase (stand-in)", {"phase"}});
    if (!jobs.ok()) return jobs.status();
    (*jobs)->WithLabels({"Running"}).Set(1);
    (*jobs)->WithLabels({"Succeeded"}).Set(3);
    auto wait = registry_.AddGauge(
        {"ccltune_job_presync_wait_seconds", "Pre-sync wait (stand-in)", {"namespace", "job"}});
    if (!wait.ok()) return wait.status();
    (*wait)->WithLabels({kNamespace, kTuneJob}).Set(0.0012);
    const core::Registry& registry = registry_;
#endif
    CCLTUNE_ASSIGN_OR_RETURN(server_, worker::MetricsExposer::Start(registry, {"127.0.0.1", 0}));
    return server_->port();
  }

 private:
#ifdef CCLTUNE_TEST_HAVE_CONTROLLER
  controller::ControllerMetrics metrics_;
#else
  core::Registry registry_;
#endif
  std::unique_ptr<worker::MetricsExposer> server_;
};
// One rank of a GPU job with all-reduce + epilogue problems, as its /metrics would read
// (synthetic_run.h): what the epilogue variable and panels need, which no host-backend run
// here can produce.
class SyntheticEpilogueRank {
 public:
  core::Result<int> Start() {
    CCLTUNE_ASSIGN_OR_RETURN(metrics_, worker::WorkerMetrics::Create(registry_, {kEpilogueJob, 0}));
    FeedSyntheticRun(*metrics_, 0);
    CCLTUNE_ASSIGN_OR_RETURN(server_, worker::MetricsExposer::Start(registry_, {"127.0.0.1", 0}));
    return server_->port();
  }

 private:
  core::Registry registry_;
  std::unique_ptr<worker::WorkerMetrics> metrics_;
  std::unique_ptr<worker::MetricsExposer> server_;
};
// ---------------------------------------------------------------------------------------

// The scrape configuration the dashboards assume (also in docs/metrics.md): workers scraped
// directly with a `namespace` target label (Kubernetes SD/PodMonitor adds it), the Pushgateway
// with honor_labels so pushed `job="ccltune"`, `ccltune_job` and `rank` survive, and the
// controller with honor_labels (its ServiceMonitor's honorLabels) so that its per-job gauge
// keeps the job's `namespace` and `job`.
std::string PrometheusConfig(const std::vector<int>& workers, int pushgateway, int controller) {
  std::string targets;
  for (int p : workers)
    targets +=
        (targets.empty() ? "'" : ", '") + std::string("127.0.0.1:") + std::to_string(p) + "'";
  return "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
         "scrape_configs:\n"
         "- job_name: ccltune-worker\n"
         "  static_configs: [{targets: [" +
         targets + "], labels: {namespace: " + kNamespace +
         "}}]\n"
         "- job_name: pushgateway\n"
         "  honor_labels: true\n"
         "  static_configs: [{targets: ['127.0.0.1:" +
         std::to_string(pushgateway) +
         "']}]\n"
         "- job_name: ccltune-controller\n"
         "  honor_labels: true\n"
         "  static_configs: [{targets: ['127.0.0.1:" +
         std::to_string(controller) + "']}]\n";
}

// Waits, while the tune processes run, until Prometheus holds the final state of the
// healthy job through both paths and the failed job's push, and returns that moment:
//  - every rank of kTuneJob scraped directly (job ccltune-worker) after tuning finished: its
//    scraped ccltune_tuning_duration_seconds equals the pushed (final) one;
//  - both pushes of kTuneJob (job ccltune, labels kept by honor_labels);
//  - kPreSyncJob's pushed ccltune_presync_timeouts_total >= 1;
//  - the controller's ccltune_jobs.
// Fails early when the healthy tune exits before that (its log in the message); the
// failing kPreSyncJob may end at any time.
core::Result<std::string> WaitForData(int prom_port, TuneProcess& tune, double seconds) {
  const std::string job = std::string("ccltune_job=\"") + kTuneJob + "\"";
  const std::string final_scrapes = "ccltune_tuning_duration_seconds{job=\"ccltune-worker\", " +
                                    job + "} == on (ccltune_job, rank) " +
                                    "ccltune_tuning_duration_seconds{job=\"ccltune\", " + job + "}";
  const std::string pushes = "ccltune_tuning_duration_seconds{job=\"ccltune\", " + job + "}";
  const std::string timeouts = "ccltune_presync_timeouts_total{job=\"ccltune\", ccltune_job=\"" +
                               std::string(kPreSyncJob) + "\"} >= 1";
  const std::string controller = "ccltune_jobs{job=\"ccltune-controller\"}";
  const worker::Deadline deadline = worker::DeadlineIn(seconds);
  std::string seen;
  while (!worker::Expired(deadline)) {
    if (auto code = tune.process->Poll())
      return core::Internal("tune " + tune.job_id + " exited (code " + std::to_string(*code) +
                            ") before Prometheus had its final state (" + seen + "); its log:\n" +
                            ReadTail(tune.log));
    const std::string at = UnixNow();
    const std::size_t n[] = {
        SeriesCount(prom_port, final_scrapes, at), SeriesCount(prom_port, pushes, at),
        SeriesCount(prom_port, timeouts, at), SeriesCount(prom_port, controller, at)};
    if (n[0] == 2 && n[1] == 2 && n[2] >= 1 && n[3] >= 1) return at;
    seen = "final scrapes " + std::to_string(n[0]) + "/2, pushes " + std::to_string(n[1]) +
           "/2, pushed pre-sync timeouts " + std::to_string(n[2]) + ", controller " +
           std::to_string(n[3]);
    std::this_thread::sleep_for(200ms);
  }
  return core::TimeoutError("Prometheus did not have the jobs' data within " +
                            std::to_string(static_cast<int>(seconds)) + " s: " + seen);
}

bool EpiloguePanel(const json& panel) {
  return panel.value("title", "").rfind("Epilogue:", 0) == 0;
}

TEST(Dashboards, EveryPanelHasAUnitTheDatasourceVariableAndAnExpr) {
  for (const char* name : kDashboards)
    for (const auto& p :
         StaticProblems(LoadDashboard(name), {"datasource", "namespace", "job", "fingerprint"}))
      ADD_FAILURE() << name << ": " << p;
}

#ifdef CCLTUNE_TEST_HAVE_CONTROLLER
TEST(ControllerMetrics, PromtoolAcceptsTheControllerExposition) {
  controller::ControllerMetrics m;
  m.SetJobsByPhase({{"Running", 2}});
  m.CountReconcile("ok", 0.004);
  m.ObserveJobDuration(420);
  m.SetJobPreSyncWait("team-a", "allreduce-sweep", 0.012);
  m.SetResultCacheEntries(128);
  m.CountResultsRequest(200);
  auto out = RunCommand({"promtool", "check", "metrics"}, m.Text(), 30s);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->exit_code, 0) << out->output << "\n--- exposition:\n" << m.Text();
}
#else
TEST(ControllerMetrics, PromtoolAcceptsTheControllerExposition) {
  GTEST_SKIP() << "ccltune_controller_lib is not built (CCLTUNE_BUILD_CONTROLLER=OFF)";
}
#endif

TEST(Dashboards, EveryPanelQueryReturnsDataFromARealPrometheus) {
  const auto t0 = std::chrono::steady_clock::now();
  TempDir pgw_dir("ccltune-pgw"), prom_dir("ccltune-prom"), job_dir("ccltune-dash-jobs");
  auto redis = RedisServer::Start();
  ASSERT_TRUE(redis.ok()) << redis.status().ToString();
  auto pgw = StartPushgateway(pgw_dir);
  ASSERT_TRUE(pgw.ok()) << pgw.status().ToString();
  ControllerExposition controller;
  auto controller_port = controller.Start();
  ASSERT_TRUE(controller_port.ok()) << controller_port.status().ToString();

  SyntheticEpilogueRank epilogue_rank;
  auto epilogue_port = epilogue_rank.Start();
  ASSERT_TRUE(epilogue_port.ok()) << epilogue_port.status().ToString();

  // Ports: kTuneJob's ranks on P, P+1; kPreSyncJob's on P+2, P+3. Prometheus scrapes all four
  // from its start, before the jobs exist (a target that is not up yet is simply down).
  const int base = FreePortRange(4);
  ASSERT_NE(base, 0) << "no 4 consecutive free ports";
  auto prom = StartPrometheus(
      prom_dir, PrometheusConfig({base, base + 1, base + 2, base + 3, *epilogue_port}, pgw->port,
                                 *controller_port));
  ASSERT_TRUE(prom.ok()) << prom.status().ToString();

  // Prometheus applies its targets a few seconds after it is ready: start the jobs only once
  // it scrapes (the worker targets are down until the ranks listen), so it sees them run.
  const worker::Deadline scraping = worker::DeadlineIn(30);
  while (SeriesCount(prom->port, "up{job=\"ccltune-worker\"}", UnixNow()) < 5 ||
         SeriesCount(prom->port,
                     "ccltune_winner_info{ccltune_job=\"" + std::string(kEpilogueJob) + "\"}",
                     UnixNow()) < 1 ||
         SeriesCount(prom->port, "up{job=\"ccltune-controller\"} == 1", UnixNow()) < 1) {
    ASSERT_FALSE(worker::Expired(scraping)) << "Prometheus did not start scraping within 30 s\n"
                                            << prom->process->LogTail();
    std::this_thread::sleep_for(200ms);
  }
  const std::string redis_url = (*redis)->url();
  auto tune = StartTune(kTuneJob, base, redis_url, pgw->url(), job_dir,
                        {"--choices", "ring,direct,recursive-doubling"}, {});
  ASSERT_TRUE(tune.ok()) << tune.status().ToString();
  auto presync = StartTune(
      kPreSyncJob, base + 2, redis_url, pgw->url(), job_dir, {"--presync-window", "0.5"},
      {{"CCLTUNE_TEST_PRESYNC_DELAY_RANK", "1"}, {"CCLTUNE_TEST_PRESYNC_DELAY_SECONDS", "2"}});
  ASSERT_TRUE(presync.ok()) << presync.status().ToString();

  auto at = WaitForData(prom->port, *tune, 40);
  ASSERT_TRUE(at.ok()) << at.status().ToString() << "\nprometheus: " << prom->process->LogTail()
                       << "\n"
                       << kTuneJob << ": " << ReadTail(tune->log) << "\n"
                       << kPreSyncJob << ": " << ReadTail(presync->log);

  // Both jobs end by themselves (after kLinger): the healthy one with 0, the other with the
  // pre-sync timeout.
  auto tune_code = tune->process->Wait(worker::DeadlineIn(kLinger + 20));
  ASSERT_TRUE(tune_code.ok()) << "tune did not exit: " << ReadTail(tune->log);
  EXPECT_EQ(*tune_code, 0) << ReadTail(tune->log);
  auto presync_code = presync->process->Wait(worker::DeadlineIn(kLinger + 20));
  ASSERT_TRUE(presync_code.ok()) << "pre-sync job did not exit: " << ReadTail(presync->log);
  EXPECT_NE(*presync_code, 0) << ReadTail(presync->log);
  EXPECT_NE(ReadTail(presync->log).find("PreSyncTimeout"), std::string::npos)
      << ReadTail(presync->log);

  // Grafana's first values (the synthetic epilogue job), All, and the real job picked as $job
  // (no epilogues: its epilogue variable is "none" and the epilogue panels are empty).
  struct Pass {
    const char* what;
    bool use_all;
    std::map<std::string, std::string> pinned;
  };
  const Pass passes[] = {
      {"first values", false, {}}, {"All", true, {}}, {"the real job", false, {{"job", kTuneJob}}}};
  for (const char* name : kDashboards) {
    json dash = LoadDashboard(name);
    for (const Pass& pass : passes) {
      auto values = ResolveVariables(prom->port, dash, pass.use_all, pass.pinned);
      ASSERT_TRUE(values.ok()) << name << " (" << pass.what << "): " << values.status().ToString();
      if (pass.pinned.empty() && !pass.use_all) EXPECT_EQ(values->at("job"), kEpilogueJob) << name;
      const bool real_job = !pass.pinned.empty();
      if (real_job && values->count("epilogue")) EXPECT_EQ(values->at("epilogue"), "none") << name;
      int queries = 0;
      auto problems =
          CheckPanels(prom->port, dash, *values, *at, queries, real_job ? EpiloguePanel : nullptr);
      EXPECT_GT(queries, 4) << name;
      for (const auto& p : problems) ADD_FAILURE() << p;
      std::fprintf(stderr, "%s (%s): %d panel queries checked\n", name, pass.what,
                   queries - static_cast<int>(problems.size()));
    }
  }
  // The epilogue variable offers the fused problem's label, and picking it fills the
  // per-choice panels with that problem's fused and unfused choices only.
  {
    json dash = LoadDashboard("ccltune-results");
    auto values = ResolveVariables(
        prom->port, dash, false,
        {{"op", "allReduce"}, {"dtype", "bf16"}, {"epilogue", "residualRmsNorm,hidden=4096"}});
    ASSERT_TRUE(values.ok()) << values.status().ToString();
    int queries = 0;
    for (const auto& p : CheckPanels(prom->port, dash, *values, *at, queries)) ADD_FAILURE() << p;
    json latency;
    for (const auto& panel : AllPanels(dash))
      if (panel["title"] == "Latency vs message size per choice") latency = panel;
    auto data = Query(prom->port, Substitute(latency["targets"][0]["expr"], *values), *at);
    ASSERT_TRUE(data.ok()) << data.status().ToString();
    std::set<std::string> choices, bytes;
    for (const auto& s : (*data)["result"]) {
      choices.insert(s["metric"].value("choice", ""));
      bytes.insert(s["metric"].value("bytes", ""));
    }
    EXPECT_TRUE(choices.count("oneshot-fused:blocks=32,mode=pull,threads=512")) << data->dump();
    EXPECT_TRUE(choices.count("nccl")) << data->dump();
    EXPECT_EQ(bytes, (std::set<std::string>{"8192", "65536", "262144", "1048576"})) << data->dump();
  }

  // What the real jobs produced, beyond "some series": the pushed copies kept their grouping
  // labels (honor_labels); the skipped choice and the pre-sync timeout were counted.
  auto pushed = Query(prom->port, "ccltune_tuning_duration_seconds{job=\"ccltune\"}", *at);
  ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  std::set<std::string> pushed_groups;
  for (const auto& s : (*pushed)["result"])
    pushed_groups.insert(s["metric"].value("ccltune_job", "") + "/" +
                         s["metric"].value("rank", ""));
  EXPECT_TRUE(pushed_groups.count(std::string(kTuneJob) + "/0") &&
              pushed_groups.count(std::string(kTuneJob) + "/1"))
      << pushed->dump();
  auto skipped =
      Query(prom->port,
            "ccltune_choice_failures_total{job=\"ccltune-worker\", ccltune_job=\"" +
                std::string(kTuneJob) + "\", choice=\"recursive-doubling\", reason=\"skipped\"}",
            *at);
  ASSERT_TRUE(skipped.ok()) << skipped.status().ToString();
  ASSERT_EQ((*skipped)["result"].size(), 2u) << skipped->dump();  // one series per rank
  for (const auto& s : (*skipped)["result"])                      // skipped once per allGather size
    EXPECT_EQ(s["value"][1], "4") << s.dump();
  // The winners Prometheus scraped are the winners that were pushed.
  auto count_of = [&](const std::string& job) {
    auto r = Query(prom->port,
                   "count(ccltune_winner_info{job=\"" + job + "\", ccltune_job=\"" +
                       std::string(kTuneJob) + "\"})",
                   *at);
    return r.ok() && !(*r)["result"].empty() ? (*r)["result"][0]["value"][1].get<std::string>()
                                             : std::string("none");
  };
  EXPECT_EQ(count_of("ccltune-worker"), "16");  // 2 ranks × 2 ops × 4 sizes
  EXPECT_EQ(count_of("ccltune"), "16");
  // Scraped during the job and its linger, more than once per rank (stale markers after the
  // exit do not count in count_over_time; scrapes before the fingerprint was known are
  // another series, hence the sum by rank).
  auto scrapes = Query(prom->port,
                       "sum by (rank) (count_over_time(ccltune_presync_timeouts_total{"
                       "job=\"ccltune-worker\", ccltune_job=\"" +
                           std::string(kTuneJob) + "\"}[5m]))",
                       UnixNow());
  ASSERT_TRUE(scrapes.ok()) << scrapes.status().ToString();
  ASSERT_EQ((*scrapes)["result"].size(), 2u) << scrapes->dump();
  for (const auto& s : (*scrapes)["result"])
    EXPECT_GE(std::stoi(s["value"][1].get<std::string>()), 2) << s.dump();
  std::fprintf(stderr, "real jobs %s and %s observed; test body took %.1f s\n", kTuneJob,
               kPreSyncJob,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

}  // namespace
}  // namespace ccltune::testing

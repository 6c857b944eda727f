// WorkerMetrics, MetricsExposer and PushMetrics against real programs: `promtool check
// metrics` on the exposition of a synthetic run, HTTP answers of the exposer, and pushes to a
// real `prometheus-pushgateway`.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "core/metrics/push_group.h"
#include "tests/metrics/child_process.h"
#include "tests/metrics/prom_servers.h"
#include "tests/metrics/synthetic_run.h"
#include "tests/metrics/test_sockets.h"
#include "tests/support/free_port.h"
#include "worker/metrics/metrics_exposer.h"
#include "worker/metrics/metrics_push.h"

namespace ccltune::worker {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::HttpGet;

struct FilledRegistry {
  core::Registry registry;
  std::unique_ptr<WorkerMetrics> metrics;
  explicit FilledRegistry(const std::string& job = "job-1", int rank = 2) {
    auto m = WorkerMetrics::Create(registry, {job, rank});
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    metrics = std::move(m).value();
    testing::FeedSyntheticRun(*metrics, rank);
  }
};

bool Contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(WorkerMetrics, PromtoolAcceptsTheExpositionOfACompleteRun) {
  FilledRegistry filled;
  std::string text = filled.registry.Text();
  auto out = testing::RunCommand({"promtool", "check", "metrics"}, text, 30s);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->exit_code, 0) << "promtool: " << out->output << "\n--- exposition:\n" << text;
  EXPECT_EQ(out->output, "") << "promtool lint findings";
}

TEST(WorkerMetrics, PromtoolRejectsABrokenExposition) {
  // Guards the test above: promtool must actually judge what we feed it.
  auto out = testing::RunCommand({"promtool", "check", "metrics"},
                                 "# TYPE x_total counter\nx_total{a=\"1} 1\n", 30s);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_NE(out->exit_code, 0) << out->output;
}

TEST(WorkerMetrics, ExportsExactlyTheDesignFamilies) {
  FilledRegistry filled;
  std::string text = filled.registry.Text();
  std::set<std::string> families;
  std::regex type_line("# TYPE ([a-z_]+) ([a-z]+)");
  for (std::sregex_iterator it(text.begin(), text.end(), type_line), end; it != end; ++it)
    families.insert((*it)[1].str() + " " + (*it)[2].str());
  std::set<std::string> expected = {"ccltune_presync_wait_seconds histogram",
                                    "ccltune_presync_skew_seconds gauge",
                                    "ccltune_presync_timeouts_total counter",
                                    "ccltune_barrier_seconds histogram",
                                    "ccltune_choice_time_seconds gauge",
                                    "ccltune_choice_busbw_bytes_per_second gauge",
                                    "ccltune_winner_info gauge",
                                    "ccltune_speedup_vs_default gauge",
                                    "ccltune_choice_failures_total counter",
                                    "ccltune_tuning_duration_seconds gauge",
                                    std::string(core::kDroppedLabelSetsFamily) + " counter"};
  EXPECT_EQ(families, expected);
}

TEST(WorkerMetrics, RecordsChoicesFailuresWinnersAndConstLabels) {
  FilledRegistry filled("job-1", 2);
  std::string text = filled.registry.Text();
  const std::string c = "ccltune_job=\"job-1\",fingerprint=\"3f2a9c0d1e4b5a67\",rank=\"2\"";
  // docs/design.md §11: NCCL default allReduce bf16 at 64 MiB = 320.67 µs.
  EXPECT_TRUE(Contains(text, "ccltune_choice_time_seconds{" + c +
                                 ",op=\"allReduce\",dtype=\"bf16\",bytes=\"67108864\","
                                 "epilogue=\"none\",choice=\"nccl\"} 0.00032067"))
      << text;
  EXPECT_TRUE(Contains(text, "ccltune_choice_failures_total{" + c +
                                 ",choice=\"nccl:algo=ring,proto=ll\",reason=\"timeout\"} 2"));
  EXPECT_TRUE(Contains(text, "reason=\"skipped\"} 9"));
  EXPECT_TRUE(Contains(text, "reason=\"wrong\"} 1"));
  EXPECT_FALSE(Contains(text, "+Inf\"}  ")) << "no infinite times exported";
  EXPECT_TRUE(Contains(text, "ccltune_tuning_duration_seconds{" + c + "} 742.5"));
  // 5 rounds per choice: 18 problems x 6 choices and 4 epilogue problems x 4 choices.
  EXPECT_TRUE(Contains(text, "ccltune_barrier_seconds_count{" + c + "} 620"));
  // One winner per problem: 18 plain problems and the epilogue ones.
  std::regex winner("ccltune_winner_info\\{[^}]*\\} 1\n");
  auto n =
      std::distance(std::sregex_iterator(text.begin(), text.end(), winner), std::sregex_iterator());
  EXPECT_EQ(n, 18 + testing::kSyntheticEpilogueProblems) << text;
}

// Issue 16: a fused all-reduce + epilogue problem is its own series, labelled with
// Epilogue::Label(), on every per-problem family; plain problems say epilogue="none".
TEST(WorkerMetrics, EpilogueProblemsCarryTheirLabelOnEveryProblemFamily) {
  FilledRegistry filled("job-1", 0);
  std::string text = filled.registry.Text();
  const std::string fused = "epilogue=\"residualRmsNorm,hidden=4096\"";
  for (const char* family : {"ccltune_choice_time_seconds", "ccltune_choice_busbw_bytes_per_second",
                             "ccltune_winner_info", "ccltune_speedup_vs_default"}) {
    const std::string open = std::string(family) + "\\{";
    std::regex with(open + "[^}]*bytes=\"8192\"," + fused + "[,}]");
    EXPECT_TRUE(std::regex_search(text, with)) << family << "\n" << text;
    std::regex plain(open + "[^}]*epilogue=\"none\"[,}]");
    EXPECT_TRUE(std::regex_search(text, plain)) << family;
    std::regex unlabelled(open + "(?![^}]*epilogue=)[^}]*\\}");
    EXPECT_FALSE(std::regex_search(text, unlabelled)) << family << " sample without epilogue";
  }
  // Fused and unfused choices of the same fused problem, side by side.
  EXPECT_TRUE(Contains(text, "bytes=\"8192\"," + fused +
                                 ",choice=\"oneshot-fused:blocks=32,mode=pull,threads=512\"}"));
  EXPECT_TRUE(Contains(text, "bytes=\"8192\"," + fused + ",choice=\"nccl\"}"));
  // 64 KiB is a plain all-reduce size and 8 tokens x 4096 x 2 B: two series, not one.
  EXPECT_TRUE(Contains(text, "bytes=\"65536\",epilogue=\"none\""));
  EXPECT_TRUE(Contains(text, "bytes=\"65536\"," + fused));
}

TEST(WorkerMetrics, AReplacedWinnerStopsBeingExported) {
  core::Registry registry;
  auto m = WorkerMetrics::Create(registry, {"j", 0});
  ASSERT_TRUE(m.ok());
  core::ResultRecord record;
  record.bytes = 4096;
  record.winner = "nccl";
  (*m)->OnRecord(record);
  record.winner = "nccl-symm";
  (*m)->OnRecord(record);
  std::string text = registry.Text();
  EXPECT_FALSE(Contains(text, "choice=\"nccl\"")) << text;
  EXPECT_TRUE(Contains(text, "choice=\"nccl-symm\"} 1")) << text;
}

TEST(WorkerMetrics, CreateFailsOnARegistryThatAlreadyHasTheFamilies) {
  core::Registry registry;
  ASSERT_TRUE(WorkerMetrics::Create(registry, {"j", 0}).ok());
  EXPECT_FALSE(WorkerMetrics::Create(registry, {"j", 0}).ok());
}

TEST(MetricsExposer, ServesMetricsAnd404sEverythingElse) {
  FilledRegistry filled;
  auto server = MetricsExposer::Start(filled.registry, {"127.0.0.1", 0});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  int port = (*server)->port();
  auto ok = HttpGet(port, "/metrics", 5s);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->code, 200);
  // prometheus-cpp's Exposer declares text/plain without a version: 0.0.4 to Prometheus.
  EXPECT_TRUE(Contains(ok->headers, "Content-Type: text/plain")) << ok->headers;
  // Besides the registry, prometheus-cpp's own exposer_* families (scrapes, bytes, latency).
  EXPECT_TRUE(Contains(ok->body, filled.registry.Text())) << ok->body.substr(0, 2000);
  EXPECT_EQ(HttpGet(port, "/metrics?x=1", 5s)->code, 200);
  EXPECT_EQ(HttpGet(port, "/", 5s)->code, 404);
  EXPECT_EQ(HttpGet(port, "/metricsx", 5s)->code, 404);
  int post = HttpGet(port, "/metrics", 5s, "POST")->code;
  EXPECT_TRUE(post >= 400 && post < 500) << post;  // civetweb's answer, not a scrape
}

TEST(MetricsExposer, BoundsRequestSizeAndSurvivesSilentClients) {
  core::Registry registry;
  auto server = MetricsExposer::Start(registry, {"127.0.0.1", 0});
  ASSERT_TRUE(server.ok());
  int port = (*server)->port();
  auto huge =
      HttpGet(port, "/metrics?" + std::string(2 * MetricsExposer::kMaxRequestBytes, 'a'), 5s);
  ASSERT_TRUE(huge.ok()) << huge.status().ToString();
  EXPECT_TRUE(huge->code >= 400 && huge->code < 500) << huge->code;
  // A client that connects and says nothing holds one of the exposer's threads at most
  // kRequestTimeoutMs; a scrape meanwhile is answered by another.
  auto silent = testing::ConnectSilently(port);
  ASSERT_TRUE(silent.ok()) << silent.status().ToString();
  auto start = Clock::now();
  auto after = HttpGet(port, "/metrics", 5s);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->code, 200);
  EXPECT_LT(Clock::now() - start, 2s);
}

TEST(MetricsExposer, StopsOnDestructionAndReportsATakenPort) {
  core::Registry registry;
  int port = 0;
  {
    auto server = MetricsExposer::Start(registry, {"127.0.0.1", 0});
    ASSERT_TRUE(server.ok());
    port = (*server)->port();
    auto again = MetricsExposer::Start(registry, {"127.0.0.1", port});
    EXPECT_EQ(again.status().code(), core::StatusCode::kUnavailable);
  }
  EXPECT_FALSE(HttpGet(port, "/metrics", 1s).ok()) << "server still answers after destruction";
  EXPECT_EQ(MetricsExposer::Start(registry, {"not-an-ip", 0}).status().code(),
            core::StatusCode::kInvalidArgument);
}

TEST(Pushgateway, PushedMetricsAppearUnderTheRanksGroup) {
  testing::TempDir dir("ccltune-pgw");
  auto pgw = testing::StartPushgateway(dir);
  ASSERT_TRUE(pgw.ok()) << pgw.status().ToString();
  FilledRegistry filled("job/with spaces", 3);  // needs the @base64 grouping form
  ASSERT_TRUE(filled.registry.SetConstLabel("ccltune_job", "job/with spaces").ok());
  core::Status st = PushMetrics(pgw->url(), "job/with spaces", 3, filled.registry, 10);
  ASSERT_TRUE(st.ok()) << st.ToString() << "\n" << pgw->process->LogTail();
  auto scraped = HttpGet(pgw->port, "/metrics", 5s);
  ASSERT_TRUE(scraped.ok());
  EXPECT_TRUE(Contains(scraped->body,
                       "ccltune_tuning_duration_seconds{ccltune_job=\"job/with "
                       "spaces\",fingerprint=\"3f2a9c0d1e4b5a67\",instance=\"\","
                       "job=\"ccltune\",rank=\"3\"} 742.5"))
      << scraped->body.substr(0, 3000);
  // A second push of the same rank replaces the group's families, it does not add to them.
  ASSERT_TRUE(PushMetrics(pgw->url(), "job/with spaces", 3, filled.registry, 10).ok());
  EXPECT_EQ(HttpGet(pgw->port, "/metrics", 5s)->body.find("742.5"),
            HttpGet(pgw->port, "/metrics", 5s)->body.rfind("742.5"));
}

TEST(Pushgateway, ReportsRefusalsTimeoutsAndBadUrls) {
  core::Registry registry;
  int closed = testing::FreePort();
  auto refused = PushMetrics("http://127.0.0.1:" + std::to_string(closed), "j", 0, registry, 5);
  EXPECT_EQ(refused.code(), core::StatusCode::kUnavailable) << refused.ToString();
  // A server that accepts but never answers: the push must give up at its deadline.
  auto hung_server = testing::ListenWithoutAccepting();
  ASSERT_TRUE(hung_server.ok()) << hung_server.status().ToString();
  auto start = Clock::now();
  auto hung =
      PushMetrics("http://127.0.0.1:" + std::to_string(hung_server->port), "j", 0, registry, 0.5);
  EXPECT_EQ(hung.code(), core::StatusCode::kTimeout) << hung.ToString();
  EXPECT_LT(Clock::now() - start, 2s);
  EXPECT_EQ(ParseGatewayUrl("ftp://pgw:9091").status().code(), core::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseGatewayUrl("http://:9091").status().code(), core::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseGatewayUrl("http://pgw:99999").status().code(),
            core::StatusCode::kInvalidArgument);
  auto prefixed = ParseGatewayUrl("http://pgw:9091/gw/");
  ASSERT_TRUE(prefixed.ok()) << prefixed.status().ToString();
  // prometheus::Gateway pushes to <host>:<port>/metrics/job/ccltune/<grouping labels>.
  EXPECT_EQ(prefixed->host + ":" + prefixed->port, "http://pgw:9091/gw");
  EXPECT_EQ(ParseGatewayUrl("https://pgw")->port, "443");
}

// The group a rank pushes to is the one the controller deletes (core/metrics/push_group.h).
TEST(Pushgateway, GroupingLabelsAndPathOfATuningRank) {
  using Label = std::pair<std::string, std::string>;
  EXPECT_EQ(core::GroupingLabel("ccltune_job", "uid-1"), Label("ccltune_job", "uid-1"));
  EXPECT_EQ(core::GroupingLabel("ccltune_job", ""), Label("ccltune_job@base64", "="));
  EXPECT_EQ(core::GroupingLabel("ccltune_job", "a/b"), Label("ccltune_job@base64", "YS9i"));
  EXPECT_EQ(core::TuningPushGroupPath("3f1c-uid", 7),
            "/metrics/job/ccltune/ccltune_job/3f1c-uid/rank/7");
  EXPECT_EQ(core::TuningPushGroupPath("a/b", 0),
            "/metrics/job/ccltune/ccltune_job@base64/YS9i/rank/0");
}

}  // namespace
}  // namespace ccltune::worker

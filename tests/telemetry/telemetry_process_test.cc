// libccltune-telemetry in real processes (tests/telemetry/telemetry_rank.cc, through the C
// ABI): ranks of one communicator matched through a real redis-server, scraped by a real
// Prometheus; the exact series of known calls; each bad setting's line; a taken port; a
// Pushgateway that is down or never answers; a full queue; a Redis that is down.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/metrics/child_process.h"
#include "tests/metrics/prom_servers.h"
#include "tests/metrics/test_sockets.h"
#include "tests/support/free_port.h"
#include "tests/support/redis_server.h"
#include "tests/support/temp_dir.h"
#include "tests/telemetry/samples.h"

namespace ccltune::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using Env = std::vector<std::string>;  // NAME=value

// A rank: telemetry_rank under `env` (only these of our variables: the test's own are
// removed), run on a thread of its own so that the test can scrape it meanwhile.
class RankRun {
 public:
  RankRun(const Env& env, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"env"};
    for (const char* name :
         {"CCLTUNE_TELEMETRY", "CCLTUNE_METRICS_PORT", "LOCAL_RANK", "SLURM_LOCALID",
          "OMPI_COMM_WORLD_LOCAL_RANK", "CCLTUNE_PUSHGATEWAY", "CCLTUNE_TELEMETRY_PUSH_SECONDS",
          "CCLTUNE_TELEMETRY_QUEUE", "CCLTUNE_REDIS_URL", "CCLTUNE_REDIS_USERNAME",
          "CCLTUNE_REDIS_PASSWORD", "CCLTUNE_POD_NAMESPACE", "CCLTUNE_POD_NAME",
          "CCLTUNE_NODE_NAME"})
      argv.insert(argv.end(), {"-u", name});
    argv.insert(argv.end(), env.begin(), env.end());
    argv.push_back(CCLTUNE_TELEMETRY_RANK);
    argv.insert(argv.end(), args.begin(), args.end());
    done_ = std::async(std::launch::async, [argv] { return RunCommand(argv, "", 60s); });
  }
  // Waits for the exit (the rank's own deadline bounds it).
  CommandOutput Finish() {
    auto out = done_.get();
    if (!out.ok()) return CommandOutput{-1, out.status().ToString()};
    return *out;
  }

 private:
  std::future<core::Result<CommandOutput>> done_;
};

Env Telemetry(int port, Env more = {}) {
  more.push_back("CCLTUNE_TELEMETRY=on");
  more.push_back("CCLTUNE_METRICS_PORT=" + std::to_string(port));
  more.push_back("LOCAL_RANK=0");
  return more;
}

int CountLines(const std::string& text, const std::string& needle) {
  std::stringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

Samples Parse(const std::string& text, const std::string& prefix = "ccltune_program_") {
  return ParseSamples(text, prefix);
}

double Num(const Samples& s, const std::string& series) { return SampleValue(s, series); }

std::string Scrape(int port) {
  auto answer = HttpGet(port, "/metrics", 2s);
  return answer.ok() && answer->code == 200 ? answer->body : "";
}

// Scrapes until `done(text)` or 20 s; returns the last text.
template <class Done>
std::string ScrapeUntil(int port, Done done) {
  std::string text;
  for (auto deadline = Clock::now() + 20s; Clock::now() < deadline;) {
    text = Scrape(port);
    if (done(text)) break;
    std::this_thread::sleep_for(100ms);
  }
  return text;
}

void Touch(const std::string& path) { std::ofstream(path) << "stop\n"; }

std::string Promtool(const std::string& text) {
  auto out = RunCommand({"promtool", "check", "metrics"}, text, 30s);
  if (!out.ok()) return out.status().ToString();
  return out->exit_code == 0 ? "" : out->output;
}

// ---- min-over-ranks --------------------------------------------------------------------

// 1100 calls: the sampled ones are seq 0-63 and 1024-1087, two windows.
constexpr std::uint64_t kCalls = 1100, kMatched = 128;
constexpr std::uint64_t kTotalNs = 100000, kStepNs = 1000, kLateNs = 300000;

std::string MatchedLabels(int rank, const std::string& method_or_source) {
  return "{comm=\"0000000000c0ffee\",rank=\"" + std::to_string(rank) +
         "\",op=\"allReduce\",dtype=\"fp32\",size=\"1MiB\",choice=\"nccl:algo=ring,proto=ll\"," +
         method_or_source + "}";
}

// Two ranks whose NCCL calls take kLateNs longer (they waited) and one that arrived last:
// through Redis, the first two see wait = kLateNs per call and the last 0; transfer = the
// last rank's time, exactly.
TEST(TelemetryProcess, MinOverRanksSplitsTheWaitOfTheRanksThatWaited) {
  auto redis = RedisServer::Start();
  ASSERT_TRUE(redis.ok()) << redis.status().ToString();
  TempDir dir("ccltune-telemetry");
  std::vector<int> ports;
  std::vector<std::unique_ptr<RankRun>> ranks;
  for (int r = 0; r < 3; ++r) {
    ports.push_back(FreePort());
    ranks.push_back(std::make_unique<RankRun>(
        Telemetry(ports.back(), {"CCLTUNE_REDIS_URL=" + (*redis)->url()}),
        std::vector<std::string>{
            "rank=" + std::to_string(r), "nranks=3", "calls=" + std::to_string(kCalls),
            "total_ns=" + std::to_string(kTotalNs), "step_ns=" + std::to_string(kStepNs),
            "extra_ns=" + std::to_string(r < 2 ? kLateNs : 0), "hold_ms=40000",
            "until=" + dir.File("stop")}));
  }
  double transfer_sum = 0;  // the last rank's times of the sampled calls
  for (std::uint64_t seq : {0, 1024})
    for (std::uint64_t i = seq; i < seq + 64; ++i) transfer_sum += (kTotalNs + i * kStepNs) * 1e-9;
  for (int r = 0; r < 3; ++r) {
    const std::string wait = "ccltune_program_sync_wait_seconds";
    const std::string l = MatchedLabels(r, "method=\"min-over-ranks\"");
    const std::string text = ScrapeUntil(ports[r], [&](const std::string& t) {
      return Num(Parse(t), wait + "_count" + l) == kMatched;
    });
    const Samples s = Parse(text);
    ASSERT_EQ(Num(s, wait + "_count" + l), kMatched) << "rank " << r << ":\n" << text;
    const double expected_wait = r < 2 ? kMatched * kLateNs * 1e-9 : 0;
    EXPECT_NEAR(Num(s, wait + "_sum" + l), expected_wait, 1e-12) << r;
    EXPECT_NEAR(Num(s, "ccltune_program_transfer_seconds_sum" + l), transfer_sum, 1e-12) << r;
    // Every wait in one bucket: 300 us in (200 us, 500 us], 0 in [0, 1 us].
    const std::string bucket = wait + "_bucket" + l.substr(0, l.size() - 1);
    EXPECT_EQ(Num(s, bucket + ",le=\"1e-06\"}"), r < 2 ? 0 : kMatched) << r;
    EXPECT_EQ(Num(s, bucket + ",le=\"0.0002\"}"), r < 2 ? 0 : kMatched) << r;
    EXPECT_EQ(Num(s, bucket + ",le=\"0.0005\"}"), kMatched) << r;
    EXPECT_EQ(
        Num(s, "ccltune_program_calls_total{comm=\"0000000000c0ffee\",rank=\"" + std::to_string(r) +
                   "\",op=\"allReduce\",choice=\"nccl:algo=ring,proto=ll\",source=\"nccl\"}"),
        kCalls);
    EXPECT_EQ(Promtool(text), "") << text;
  }
  // The ratio the library keeps for the last 10 s: wait over collective time.
  const double collective = transfer_sum + kMatched * kLateNs * 1e-9;
  const std::string ratio = "ccltune_program_sync_wait_ratio{comm=\"0000000000c0ffee\",rank=\"0\"}";
  const std::string text = ScrapeUntil(ports[0], [&](const std::string& t) {
    return std::abs(Num(Parse(t), ratio) - kMatched * kLateNs * 1e-9 / collective) < 1e-9;
  });
  EXPECT_NEAR(Num(Parse(text), ratio), kMatched * kLateNs * 1e-9 / collective, 1e-9) << text;

  // A real Prometheus scrapes the three endpoints and sees the same split per rank.
  std::string config =
      "global:\n  scrape_interval: 1s\nscrape_configs:\n- job_name: ranks\n"
      "  static_configs:\n  - targets: [";
  for (int r = 0; r < 3; ++r)
    config += (r ? ",'127.0.0.1:" : "'127.0.0.1:") + std::to_string(ports[r]) + "'";
  config += "]\n";
  auto prom = StartPrometheus(dir, config);
  ASSERT_TRUE(prom.ok()) << prom.status().ToString();
  // sum by rank: Prometheus's own `instance` label would otherwise split nothing useful.
  const std::string query =
      "/api/v1/query?query=" + UrlEncode(
                                   "sum by (rank) (ccltune_program_sync_wait_seconds_sum"
                                   "{method=\"min-over-ranks\"})");
  std::map<std::string, double> by_rank;
  std::string last;
  for (auto deadline = Clock::now() + 30s; Clock::now() < deadline && by_rank.size() < 3;) {
    std::this_thread::sleep_for(500ms);
    auto answer = HttpGet(prom->port, query, 5s);
    last = answer.ok() ? answer->body : answer.status().ToString();
    if (!answer.ok() || answer->code != 200) continue;
    by_rank.clear();
    const nlohmann::json parsed = nlohmann::json::parse(answer->body, nullptr, false);
    if (parsed.is_discarded()) continue;
    for (const auto& series : parsed["data"]["result"])
      by_rank[series["metric"]["rank"].get<std::string>()] =
          std::stod(series["value"][1].get<std::string>());
  }
  auto targets = HttpGet(prom->port, "/api/v1/targets", 5s);
  ASSERT_EQ(by_rank.size(), 3u) << last << "\n" << (targets.ok() ? targets->body : "");
  EXPECT_NEAR(by_rank["0"], kMatched * kLateNs * 1e-9, 1e-12);
  EXPECT_NEAR(by_rank["1"], kMatched * kLateNs * 1e-9, 1e-12);
  EXPECT_EQ(by_rank["2"], 0);

  Touch(dir.File("stop"));
  for (auto& rank : ranks) {
    const CommandOutput out = rank->Finish();
    EXPECT_EQ(out.exit_code, 0) << out.output;
    EXPECT_EQ(CountLines(out.output, "telemetry:"), 0) << out.output;
  }
}

// ---- one process ---------------------------------------------------------------------

// Known calls of our kernels (Kernel split) and of NCCL, the counters, the tuned gauge and
// the pod's labels: the exact series, then promtool on the exposition.
TEST(TelemetryProcess, KnownCallsGiveExactSeries) {
  TempDir dir("ccltune-telemetry");
  const int port = FreePort();
  RankRun rank(
      Telemetry(port, {"CCLTUNE_POD_NAMESPACE=ml", "CCLTUNE_POD_NAME=trainer-0"}),
      {"rank=1", "nranks=2", "call=allReduce/bf16/3000/oneshot:mode=pull/10000/kernel/4000/6000/2",
       "call=allGather/fp32/1048576/nccl/50000/none/0/0/1", "forwarded=nccl-won/5",
       "dropped=kernel-ring-full/2", "tuned=allReduce/bf16/3000/oneshot:mode=pull/9e-06",
       "hold_ms=30000", "until=" + dir.File("stop")});
  const std::string pod = "namespace=\"ml\",pod=\"trainer-0\",";  // no node: omitted
  const std::string comm = "comm=\"0000000000c0ffee\",rank=\"1\",";
  const std::string ar =
      pod + comm + "op=\"allReduce\",dtype=\"bf16\",size=\"2KiB\",choice=\"oneshot:mode=pull\"";
  const std::string ag =
      pod + comm + "op=\"allGather\",dtype=\"fp32\",size=\"1MiB\",choice=\"nccl\"";
  const Samples expected = {
      {"ccltune_program_calls_total{" + pod + comm +
           "op=\"allGather\",choice=\"nccl\",source=\"nccl\"}",
       "1"},
      {"ccltune_program_calls_total{" + pod + comm +
           "op=\"allReduce\",choice=\"oneshot:mode=pull\",source=\"ccltune\"}",
       "2"},
      {"ccltune_program_collective_seconds_count{" + ag + ",source=\"nccl\"}", "1"},
      {"ccltune_program_collective_seconds_sum{" + ag + ",source=\"nccl\"}", "5e-05"},
      {"ccltune_program_collective_seconds_count{" + ar + ",source=\"ccltune\"}", "2"},
      {"ccltune_program_collective_seconds_sum{" + ar + ",source=\"ccltune\"}", "2e-05"},
      {"ccltune_program_sync_wait_seconds_count{" + ar + ",method=\"kernel\"}", "2"},
      {"ccltune_program_sync_wait_seconds_sum{" + ar + ",method=\"kernel\"}", "8e-06"},
      {"ccltune_program_transfer_seconds_count{" + ar + ",method=\"kernel\"}", "2"},
      {"ccltune_program_transfer_seconds_sum{" + ar + ",method=\"kernel\"}", "1.2e-05"},
      {"ccltune_program_sync_wait_ratio{" + pod + "comm=\"0000000000c0ffee\",rank=\"1\"}", "0.4"},
      {"ccltune_program_forwarded_calls_total{" + pod + "reason=\"nccl-won\"}", "5"},
      {"ccltune_program_telemetry_dropped_total{" + pod + "what=\"kernel-ring-full\"}", "2"},
      {"ccltune_program_tuned_seconds{" + pod +
           "comm=\"0000000000c0ffee\",op=\"allReduce\",dtype=\"bf16\",size=\"2KiB\",choice="
           "\"oneshot:mode=pull\"}",
       "9e-06"},
  };
  auto without_buckets = [](const std::string& text) {
    Samples s = Parse(text);
    std::erase_if(s, [](const auto& kv) { return kv.first.find("_bucket{") != std::string::npos; });
    return s;
  };
  const std::string text =
      ScrapeUntil(port, [&](const std::string& t) { return without_buckets(t) == expected; });
  EXPECT_EQ(without_buckets(text), expected) << text;
  const Samples all = Parse(text);
  const std::string wait = "ccltune_program_sync_wait_seconds_bucket{" + ar + ",method=\"kernel\",";
  const std::string coll = "ccltune_program_collective_seconds_bucket{" + ag + ",source=\"nccl\",";
  const Samples buckets = {{wait + "le=\"2e-06\"}", "0"},
                           {wait + "le=\"5e-06\"}", "2"},
                           {coll + "le=\"2e-05\"}", "0"},
                           {coll + "le=\"5e-05\"}", "1"}};
  for (const auto& [series, value] : buckets) EXPECT_EQ(all.at(series), value) << series;
  EXPECT_EQ(Promtool(text), "") << text;
  Touch(dir.File("stop"));
  const CommandOutput out = rank.Finish();
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(CountLines(out.output, "telemetry:"), 0) << out.output;
}

// Each bad value: one line naming the variable and what it allows; the program runs on
// with telemetry off (nothing recorded, no endpoint).
TEST(TelemetryProcess, EachBadSettingSaysOneLineAndTheProgramRunsOn) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"CCLTUNE_TELEMETRY", "yes"},
      {"CCLTUNE_METRICS_PORT", "http"},
      {"LOCAL_RANK", "-2"},
      {"CCLTUNE_PUSHGATEWAY", "gateway:9091"},
      {"CCLTUNE_TELEMETRY_PUSH_SECONDS", "never"},
      {"CCLTUNE_TELEMETRY_QUEUE", "1"},
  };
  for (const auto& [name, value] : cases) {
    const int port = FreePort();
    Env env = {"CCLTUNE_TELEMETRY=on", "CCLTUNE_METRICS_PORT=" + std::to_string(port)};
    env.push_back(name + "=" + value);
    const CommandOutput out = RankRun(env, {"calls=10", "choice=nccl"}).Finish();
    EXPECT_EQ(out.exit_code, 0) << name << ": " << out.output;
    EXPECT_EQ(CountLines(out.output, "telemetry:"), 1) << name << ": " << out.output;
    EXPECT_EQ(CountLines(out.output, "telemetry: " + name + ": '" + value + "' is not"), 1)
        << out.output;
    EXPECT_EQ(CountLines(out.output, "telemetry is off, the program runs on"), 1) << out.output;
    EXPECT_EQ(CountLines(out.output, "enabled=0"), 1) << out.output;
    EXPECT_EQ(CountLines(out.output, "recorded=10"), 1) << out.output;
  }
  // A Redis URL may hold a password: its line names the variable, not the value.
  const CommandOutput redis =
      RankRun({"CCLTUNE_TELEMETRY=on", "CCLTUNE_REDIS_URL=rediss://u:secret@h"}, {}).Finish();
  EXPECT_EQ(redis.exit_code, 0) << redis.output;
  EXPECT_EQ(CountLines(redis.output,
                       "telemetry: CCLTUNE_REDIS_URL: the value is not "
                       "redis://[[user]:password@]host[:port][/db]"),
            1)
      << redis.output;
  EXPECT_EQ(redis.output.find("secret"), std::string::npos) << redis.output;
  EXPECT_EQ(CountLines(redis.output, "enabled=0"), 1) << redis.output;
  // Guards the cases above: the same run with good settings is on.
  const CommandOutput good = RankRun(Telemetry(FreePort()), {"calls=10"}).Finish();
  EXPECT_EQ(CountLines(good.output, "enabled=1"), 1) << good.output;
}

// A port that is taken: one line naming it, no endpoint, and the pushes still arrive.
TEST(TelemetryProcess, ATakenPortSaysItAndPushesGoOn) {
  TempDir dir("ccltune-telemetry");
  auto gateway = StartPushgateway(dir);
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  auto taken = ListenWithoutAccepting();
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  RankRun rank(
      Telemetry(taken->port, {"CCLTUNE_PUSHGATEWAY=" + gateway->url(),
                              "CCLTUNE_TELEMETRY_PUSH_SECONDS=0.2", "CCLTUNE_POD_NAME=trainer-1"}),
      {"calls=7", "choice=nccl", "hold_ms=30000", "until=" + dir.File("stop")});
  const std::string pushed =
      "ccltune_program_calls_total{choice=\"nccl\",comm=\"0000000000c0ffee\",instance=\"\","
      "job=\"ccltune-program\",local_rank=\"0\",op=\"allReduce\",pod=\"trainer-1\",rank=\"0\","
      "source=\"nccl\"} 7";
  std::string text;
  for (auto deadline = Clock::now() + 20s; Clock::now() < deadline;) {
    text = Scrape(gateway->port);
    if (text.find(pushed) != std::string::npos) break;
    std::this_thread::sleep_for(100ms);
  }
  Touch(dir.File("stop"));
  const CommandOutput out = rank.Finish();
  EXPECT_NE(text.find(pushed), std::string::npos) << text;
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(CountLines(out.output, "telemetry: no /metrics endpoint: port " +
                                       std::to_string(taken->port) + " cannot be bound"),
            1)
      << out.output;
  EXPECT_EQ(CountLines(out.output, "telemetry:"), 1) << out.output;
}

// A Pushgateway that refuses connections: one line for many failed pushes. One that accepts
// and never answers: calls are still recorded and the process still exits (shutdown's
// bounded wait leaves the push behind).
TEST(TelemetryProcess, APushgatewayThatIsDownSaysOnceAndNeverBlocks) {
  const int closed = FreePort();
  const CommandOutput down =
      RankRun(
          Telemetry(FreePort(), {"CCLTUNE_PUSHGATEWAY=http://127.0.0.1:" + std::to_string(closed),
                                 "CCLTUNE_TELEMETRY_PUSH_SECONDS=0.1"}),
          {"calls=1000", "hold_ms=1500"})
          .Finish();
  EXPECT_EQ(down.exit_code, 0) << down.output;
  EXPECT_EQ(CountLines(down.output, "recorded=1000"), 1) << down.output;
  EXPECT_EQ(CountLines(down.output, "telemetry: push to the Pushgateway http://127.0.0.1:" +
                                        std::to_string(closed) + " failed"),
            1)
      << down.output;
  EXPECT_EQ(CountLines(down.output, "telemetry:"), 1) << down.output;

  auto silent = ListenWithoutAccepting();
  ASSERT_TRUE(silent.ok()) << silent.status().ToString();
  const CommandOutput hung =
      RankRun(Telemetry(FreePort(),
                        {"CCLTUNE_PUSHGATEWAY=http://127.0.0.1:" + std::to_string(silent->port),
                         "CCLTUNE_TELEMETRY_PUSH_SECONDS=0.1"}),
              {"calls=1000", "hold_ms=500"})
          .Finish();
  EXPECT_EQ(hung.exit_code, 0) << hung.output;
  EXPECT_EQ(CountLines(hung.output, "recorded=1000"), 1) << hung.output;
  EXPECT_EQ(CountLines(hung.output, "exiting"), 1) << hung.output;
}

// A queue of 16 calls under 200000: some are dropped, every call is either counted or
// dropped, and the drop is said once.
TEST(TelemetryProcess, AFullQueueDropsCountsAndSaysOnce) {
  TempDir dir("ccltune-telemetry");
  const int port = FreePort();
  constexpr int kCallsMade = 200000;
  RankRun rank(Telemetry(port, {"CCLTUNE_TELEMETRY_QUEUE=16"}),
               {"calls=" + std::to_string(kCallsMade), "choice=nccl", "hold_ms=30000",
                "until=" + dir.File("stop")});
  const std::string calls =
      "ccltune_program_calls_total{comm=\"0000000000c0ffee\",rank=\"0\","
      "op=\"allReduce\",choice=\"nccl\",source=\"nccl\"}";
  const std::string dropped = "ccltune_program_telemetry_dropped_total{what=\"queue-full\"}";
  const std::string text = ScrapeUntil(port, [&](const std::string& t) {
    const Samples s = Parse(t);
    return Num(s, calls) + Num(s, dropped) == kCallsMade;
  });
  const Samples s = Parse(text);
  EXPECT_EQ(Num(s, calls) + Num(s, dropped), kCallsMade) << text;
  EXPECT_GT(Num(s, dropped), 0) << text;
  Touch(dir.File("stop"));
  const CommandOutput out = rank.Finish();
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(CountLines(out.output,
                       "telemetry: the call queue (16 calls, CCLTUNE_TELEMETRY_QUEUE) is full"),
            1)
      << out.output;
  EXPECT_EQ(CountLines(out.output, "telemetry:"), 1) << out.output;
}

// Redis down: one line; NCCL's calls keep their collective time, without a split.
TEST(TelemetryProcess, ARedisThatIsDownSaysOnceAndCallsKeepTheirTime) {
  TempDir dir("ccltune-telemetry");
  const int port = FreePort();
  RankRun rank(
      Telemetry(port, {"CCLTUNE_REDIS_URL=redis://127.0.0.1:" + std::to_string(FreePort())}),
      {"nranks=2", "calls=200", "hold_ms=30000", "until=" + dir.File("stop")});
  const std::string calls =
      "ccltune_program_calls_total{comm=\"0000000000c0ffee\",rank=\"0\","
      "op=\"allReduce\",choice=\"nccl:algo=ring,proto=ll\",source=\"nccl\"}";
  const std::string text =
      ScrapeUntil(port, [&](const std::string& t) { return Num(Parse(t), calls) == 200; });
  EXPECT_EQ(Num(Parse(text), calls), 200) << text;
  std::this_thread::sleep_for(1500ms);  // past the idle window's post, and a retry or two
  EXPECT_EQ(Parse(Scrape(port), "ccltune_program_sync_wait_seconds").size(), 0u);
  Touch(dir.File("stop"));
  const CommandOutput out = rank.Finish();
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(CountLines(out.output, "telemetry: Redis at redis://127.0.0.1:"), 1) << out.output;
  EXPECT_EQ(CountLines(out.output, "telemetry:"), 1) << out.output;
}

}  // namespace
}  // namespace ccltune::testing

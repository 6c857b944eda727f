// A whole local job: `ccltune tune` with 4 host-backend ranks against a real redis-server,
// then the shared cache read back with `ccltune results` and through ResultStore.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "core/choice.h"
#include "core/result_store.h"
#include "tests/integration/ccltune_process.h"
#include "tests/support/redis_server.h"

namespace ccltune::testing {
namespace {

class TuneJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = RedisServer::Start();
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    redis_ = std::move(s).value();
    auto c = core::RedisClient::Connect(redis_->endpoint());
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    client_ = std::move(c).value();
  }
  // `ccltune tune -v` with the default (adaptive) search, 4 host ranks, allReduce, 3 rounds;
  // the job summary, or an empty object when the run failed (`run` says why).
  nlohmann::json TuneAllReduceAdaptive(const std::string& sizes, const std::string& iters,
                                       RunResult& run) {
    const std::string json = dir_.File("summary.json");
    run = RunCcltune(
        {"tune", "--ranks",   "4",       "--backend", "host",    "--redis", redis_->url(),
         "--op", "allReduce", "--sizes", sizes,       "--iters", iters,     "--rounds",
         "3",    "--warmup",  "1",       "-v",        "--json",  json},
        {}, 300);
    return run.code == 0 ? nlohmann::json::parse(ReadFile(json)) : nlohmann::json::object();
  }

  std::unique_ptr<RedisServer> redis_;
  std::unique_ptr<core::RedisClient> client_;
  TempDir dir_{"ccltune-tune"};
};

// The rule of DESIGN §2.6, checked from the record's own choice list.
void ExpectWinnerRule(const core::ResultRecord& r, double noise_percent) {
  const core::ChoiceResult* def = nullptr;
  const core::ChoiceResult* fastest = nullptr;
  for (const auto& c : r.choices) {
    if (c.name == "ring") def = &c;
    if (c.status != core::ChoiceStatus::kOk) continue;
    if (!fastest || c.time_us < fastest->time_us) fastest = &c;
  }
  ASSERT_NE(def, nullptr) << r.Key() << ": the default was not measured";
  ASSERT_NE(fastest, nullptr) << r.Key();
  if (r.winner == "ring") {
    EXPECT_LE(def->time_us, fastest->time_us * (1 + noise_percent / 100) + 1e-9) << r.Key();
  } else {
    EXPECT_EQ(r.winner, fastest->name) << r.Key();
    EXPECT_GT(def->time_us, fastest->time_us * (1 + noise_percent / 100)) << r.Key();
    EXPECT_NEAR(r.speedup_vs_default, def->time_us / fastest->time_us, 1e-6) << r.Key();
  }
  for (const auto& c : r.choices)
    if (c.name == r.winner) EXPECT_DOUBLE_EQ(r.time_us, c.time_us) << r.Key();
}

TEST_F(TuneJobTest, FourRanksPublishOneRecordPerProblemWithTheRightWinner) {
  const std::string json = dir_.File("summary.json");
  auto run = RunCcltune({"tune",        "--ranks",     "4",
                         "--backend",   "host",        "--redis",
                         redis_->url(), "--op",        "allReduce,allGather,reduceScatter",
                         "--sizes",     "1KiB:4MiB:4", "--iters",
                         "5",           "--rounds",    "3",
                         "--warmup",    "1",           "--search",
                         "exhaustive",  "--json",      json},
                        {}, 300);
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("busbw(GB/s)"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("# search exhaustive: screening 0.00 s (0 choices screened"),
            std::string::npos)
      << run.output;

  core::ResultStore store(*client_);
  auto fps = store.Fingerprints();
  ASSERT_TRUE(fps.ok()) << fps.status().ToString();
  ASSERT_EQ(fps->size(), 1u);
  auto records = store.List(fps->front());
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  // 3 ops x 7 sizes (1KiB, 4KiB, ..., 4MiB), exactly one record each.
  ASSERT_EQ(records->size(), 21u);
  std::set<std::string> keys;
  for (const auto& r : *records) {
    keys.insert(r.Key());
    EXPECT_EQ(r.search, core::Search::kExhaustive);
    for (const auto& c : r.choices) EXPECT_EQ(c.status, core::ChoiceStatus::kOk) << r.Key();
    EXPECT_EQ(r.world_size, 4);
    EXPECT_EQ(r.fingerprint, fps->front());
    ExpectWinnerRule(r, 3.0);
  }
  EXPECT_EQ(keys.size(), 21u);
  auto raw = client_->Command({"KEYS", "ccltune:v1:result:*"});
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw->elements.size(), 21u);

  const std::string summary = ReadFile(json);
  EXPECT_NE(summary.find("\"presync\""), std::string::npos);

  auto listed = RunCcltune({"results", "--redis", redis_->url()});
  ASSERT_EQ(listed.code, 0) << listed.output;
  for (const char* op : {"allReduce", "allGather", "reduceScatter"})
    EXPECT_NE(listed.output.find(op), std::string::npos) << listed.output;

  // Nearest tuned size in log2 space: 3000 bytes → the 4 KiB bucket.
  auto one = RunCcltune({"results", "--redis", redis_->url(), "--op", "allReduce", "--dtype",
                         "fp32", "--bytes", "3000"});
  ASSERT_EQ(one.code, 0) << one.output;
  EXPECT_NE(one.output.find("\"bytes\": 4096"), std::string::npos) << one.output;
}

// The adaptive search (the default, issue 25): the default choice and every winner are
// measured in full and verified; a dropped choice is listed as pruned, without a time, with
// the evidence; records, the summary and `-v` say which search ran and where its time went.
TEST_F(TuneJobTest, AdaptiveSearchPrunesWithReasonsAndPublishesOnlyFullMeasurements) {
  RunResult run;
  const auto summary = TuneAllReduceAdaptive("1KiB:1MiB:4", "5", run);
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("# search adaptive: screening "), std::string::npos) << run.output;
  EXPECT_EQ(summary["search"], "adaptive");
  EXPECT_GT(summary["timing"]["screeningS"].get<double>(), 0);
  EXPECT_GT(summary["timing"]["fullS"].get<double>(), 0);
  int pruned = 0;
  for (const auto& j : summary["records"]) {
    auto r = core::ResultFromJson(j);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->search, core::Search::kAdaptive);
    ExpectWinnerRule(*r, 3.0);
    for (const auto& c : r->choices) {
      if (c.name == "ring" || c.name == r->winner) {
        EXPECT_EQ(c.status, core::ChoiceStatus::kOk) << r->Key() << " " << c.name;
      }
      if (c.status == core::ChoiceStatus::kPruned) {
        ++pruned;
        EXPECT_TRUE(std::isinf(c.time_us)) << r->Key() << " " << c.name;
        EXPECT_EQ(c.reason.rfind("screening: fastest of 2 rounds ", 0), 0u) << c.reason;
        EXPECT_NE(run.output.find("pruned: " + c.reason.substr(0, 60)), std::string::npos)
            << run.output;
      } else {
        EXPECT_EQ(c.status, core::ChoiceStatus::kOk) << r->Key() << " " << c.name;
      }
    }
  }
  // direct is 2-3x slower than ring at 1 MiB and rs+ag 2x slower than recursive-doubling at
  // 1 KiB on this backend: something is dropped.
  EXPECT_GT(pruned, 0) << run.output;
  EXPECT_EQ(summary["screening"]["pruned"], pruned);
  core::ResultStore store(*client_);
  auto fps = store.Fingerprints();
  ASSERT_TRUE(fps.ok() && fps->size() == 1u);
  auto records = store.List(fps->front());
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  ASSERT_EQ(records->size(), 6u);  // 1 KiB, 4 KiB, ..., 1 MiB
  for (const auto& r : *records) EXPECT_EQ(r.search, core::Search::kAdaptive) << r.Key();
}

// Short screening rounds (iters/4, here 5 of 20) once the group's default took >= 100 µs an
// op at a smaller size (host ops always do): from the second size on every choice is
// screened, the default too, and drops say the rounds' length; the first size screens with
// full-length rounds, without the default. Kept choices still run all their rounds.
TEST_F(TuneJobTest, AdaptiveSearchScreensWithShortRoundsWhereOpsAreLong) {
  RunResult run;
  const auto summary = TuneAllReduceAdaptive("64KiB:1MiB:4", "20", run);
  ASSERT_EQ(run.code, 0) << run.output;
  ASSERT_EQ(summary["records"].size(), 3u);
  // 64 KiB: the 3 others after the default; 256 KiB and 1 MiB: all 4 host choices.
  EXPECT_EQ(summary["screening"]["screened"], 3 + 4 + 4) << run.output;
  int short_drops = 0;
  for (const auto& j : summary["records"]) {
    auto r = core::ResultFromJson(j);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ExpectWinnerRule(*r, 3.0);
    for (const auto& c : r->choices) {
      if (c.status != core::ChoiceStatus::kPruned) {
        EXPECT_EQ(c.status, core::ChoiceStatus::kOk) << r->Key() << " " << c.name;
        continue;
      }
      const bool is_short = c.reason.find("(rounds of 5 iterations)") != std::string::npos;
      EXPECT_EQ(is_short, r->bytes > (64u << 10)) << r->Key() << ": " << c.reason;
      short_drops += is_short ? 1 : 0;
    }
  }
  // direct is 2-3x slower than the best at 256 KiB and 1 MiB on this backend.
  EXPECT_GT(short_drops, 0) << run.output;
  const auto& t = summary["timing"];
  EXPECT_GT(t["prepareS"].get<double>(), 0);
  EXPECT_GT(t["warmupS"].get<double>(), 0);
  EXPECT_GT(t["verifyS"].get<double>(), 0);
  EXPECT_NEAR(t["warmupVerifyS"].get<double>(),
              t["prepareS"].get<double>() + t["warmupS"].get<double>() + t["verifyS"].get<double>(),
              1e-9);
}

// CCLTUNE_BUFFER_ROTATION=0 (one cached buffer set, for comparing with nccl-tests): the job
// measures and reports, says so, and its ranks publish nothing to the shared cache.
TEST_F(TuneJobTest, CachedBufferSetMeasuresButPublishesNothing) {
  const std::string json = dir_.File("summary.json");
  auto run = RunCcltune(
      {"tune", "--ranks", "2", "--backend", "host", "--redis", redis_->url(), "--op", "allReduce",
       "--sizes", "4KiB,64KiB", "--iters", "3", "--rounds", "2", "--warmup", "1", "--json", json},
      {{"CCLTUNE_BUFFER_ROTATION", "0"}}, 120);
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("CCLTUNE_BUFFER_ROTATION=0"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("busbw(GB/s)"), std::string::npos) << run.output;
  const auto summary = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(summary.value("bufferRotation", true), false) << summary.dump();
  EXPECT_EQ(summary.value("published", -1), 0) << summary.dump();
  EXPECT_EQ(summary.value("problems", 0), 2) << summary.dump();
  auto raw = client_->Command({"KEYS", "ccltune:v1:result:*"});
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw->elements.size(), 0u);
}

// `--emulate-nodes 2` (issue 33) on the host backend: ranks 0-1 and 2-3 become two named
// nodes of this machine's node (CCLTUNE_NODE_NAME here), the fingerprint says 2 nodes of 2,
// which differs from the same job on one node, and the summary prints the split.
TEST_F(TuneJobTest, EmulatedNodesSplitTheRanksAndTheFingerprint) {
  auto tune = [&](const std::vector<std::string>& more, RunResult& run) {
    std::vector<std::string> args{"tune",
                                  "--ranks",
                                  "4",
                                  "--backend",
                                  "host",
                                  "--redis",
                                  redis_->url(),
                                  "--op",
                                  "allReduce",
                                  "--sizes",
                                  "4KiB",
                                  "--iters",
                                  "2",
                                  "--rounds",
                                  "1",
                                  "--json",
                                  dir_.File("summary.json")};
    args.insert(args.end(), more.begin(), more.end());
    run = RunCcltune(args, {{"CCLTUNE_NODE_NAME", "box"}}, 120);
    return run.code == 0 ? nlohmann::json::parse(ReadFile(dir_.File("summary.json")))
                         : nlohmann::json::object();
  };
  RunResult run;
  const auto split = tune({"--emulate-nodes", "2"}, run);
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("# nodes 2, 2 ranks per node"), std::string::npos) << run.output;
  EXPECT_EQ(split["fingerprintInfo"]["nodes"], 2) << split.dump();
  EXPECT_EQ(split["fingerprintInfo"]["gpusPerNode"], 2) << split.dump();
  EXPECT_EQ(split["nodeOfRank"],
            nlohmann::json({"box-node0", "box-node0", "box-node1", "box-node1"}));
  EXPECT_FALSE(split.contains("ncclTopology")) << "the host backend runs no NCCL";
  const auto one = tune({}, run);
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("# nodes 1, 4 ranks per node"), std::string::npos) << run.output;
  EXPECT_EQ(one["nodeOfRank"], nlohmann::json({"box", "box", "box", "box"}));
  EXPECT_NE(one["fingerprint"], split["fingerprint"]);
}

// /metrics is ancillary: a rank whose port is taken (pods of the Kubernetes simulator share
// one network namespace) warns and tunes on instead of failing the job.
TEST_F(TuneJobTest, TakenMetricsPortCostsOnlyThatRanksMetrics) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);  // where the ranks bind
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const int taken = ntohs(addr.sin_port);
  auto run = RunCcltune({"tune", "--ranks", "2", "--backend", "host", "--redis", redis_->url(),
                         "--op", "allReduce", "--sizes", "1KiB", "--iters", "2", "--rounds", "2",
                         "--warmup", "1", "--metrics-port-base", std::to_string(taken)},
                        {}, 120);
  close(fd);
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find(":" + std::to_string(taken) + ": "), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("this rank serves no /metrics"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace ccltune::testing

// A whole local job: `ccltune tune` with 4 host-backend ranks against a real redis-server,
// then the shared cache read back with `ccltune results` and through ResultStore.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "core/plan/choice.h"
#include "core/plan/search_mode.h"
#include "core/results/result_store.h"
#include "core/search/screening.h"
#include "tests/integration/ccltune_process.h"
#include "tests/support/redis_test.h"

namespace ccltune::testing {
namespace {

class TuneJobTest : public RedisTest {
 protected:
  // `ccltune tune -v` with the default (adaptive) search, 4 host ranks, allReduce, 3 rounds, the
  // four host choices and `test-slow` (the ring, reported 10 s an op slower than it ran: a
  // choice the rule must drop on any machine and load); the job summary, or an empty object
  // when the run failed (`run` says why).
  nlohmann::json TuneAllReduceAdaptive(const std::string& sizes, const std::string& iters,
                                       RunResult& run) {
    const std::string json = dir_.File("summary.json");
    run = RunCcltune(HostTuneArgs(4, redis_->url(),
                                  {"--op", "allReduce", "--sizes", sizes, "--iters", iters,
                                   "--rounds", "3", "--warmup", "1", "--choices",
                                   std::string(kHostChoices) + ",test-slow", "-v", "--json", json}),
                     {{"CCLTUNE_ENABLE_TEST_CHOICES", "1"}}, 300);
    return run.code == 0 ? nlohmann::json::parse(ReadFile(json)) : nlohmann::json::object();
  }

  static constexpr const char* kHostChoices = "ring,recursive-doubling,direct,rs+ag";
  TempDir dir_{"ccltune-tune"};
};

int CountLines(const std::string& text, const std::regex& re) {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += std::regex_search(line, re) ? 1 : 0;
  return n;
}

// The rule of docs/design.md §2.6, checked from the record's own choice list.
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
  // "Beats by more than the threshold" is a time below (1 - noise/100) x the default's, as
  // core::PickWinner has it; (1 + noise/100) x the fastest would differ near the edge.
  const double bar_us = def->time_us * (1 - noise_percent / 100);
  if (r.winner == "ring") {
    EXPECT_GE(fastest->time_us, bar_us - 1e-9) << r.Key();
  } else {
    EXPECT_EQ(r.winner, fastest->name) << r.Key();
    EXPECT_LT(fastest->time_us, bar_us) << r.Key();
    EXPECT_NEAR(r.speedup_vs_default, def->time_us / fastest->time_us, 1e-6) << r.Key();
  }
  for (const auto& c : r.choices)
    if (c.name == r.winner) EXPECT_DOUBLE_EQ(r.time_us, c.time_us) << r.Key();
}

// A pruned choice's reason, as core::JudgeScreening writes it: "screening: fastest of N rounds
// F us > X x R us, the slowest round of REF[ (rounds of K iterations)]".
struct Drop {
  int rounds = 0;
  double fastest_us = 0, factor = 0, reference_us = 0;
  std::string reference;
  int short_iters = 0;  // 0: full-length screening rounds
};

std::optional<Drop> ParseDrop(const std::string& reason) {
  static const std::regex kReason(
      R"(screening: fastest of (\d+) rounds ([0-9.]+) us > ([0-9.]+) x ([0-9.]+) us, )"
      R"(the slowest round of (\S+)(?: \(rounds of (\d+) iterations\))?)");
  std::smatch m;
  if (!std::regex_match(reason, m, kReason)) return std::nullopt;
  return Drop{std::stoi(m[1]),
              std::stod(m[2]),
              std::stod(m[3]),
              std::stod(m[4]),
              m[5],
              m[6].matched ? std::stoi(m[6]) : 0};
}

// What the rule guarantees of every drop, whatever the machine's speed and load: the reason
// names a reference that was measured in full and verified (ok in the record), the fastest
// screening round exceeds 1.03 x that reference's slowest round, and with full-length rounds
// that is the reference's slowest full round (maxUs). `test-slow` is always dropped.
void ExpectDropsFollowTheRule(const core::ResultRecord& r, bool short_rounds, int* pruned) {
  bool slow_dropped = false;
  for (const auto& c : r.choices) {
    if (c.name == "ring") EXPECT_EQ(c.status, core::ChoiceStatus::kOk) << r.Key();
    if (c.status != core::ChoiceStatus::kPruned) {
      EXPECT_EQ(c.status, core::ChoiceStatus::kOk) << r.Key() << " " << c.name;
      continue;
    }
    ++*pruned;
    EXPECT_TRUE(std::isinf(c.time_us)) << r.Key() << " " << c.name;
    const auto drop = ParseDrop(c.reason);
    ASSERT_TRUE(drop.has_value()) << r.Key() << ": " << c.reason;
    EXPECT_EQ(drop->rounds, 2) << c.reason;
    EXPECT_EQ(drop->short_iters, short_rounds ? 5 : 0) << r.Key() << ": " << c.reason;
    EXPECT_DOUBLE_EQ(drop->factor, 1.03) << c.reason;
    // The reason prints both times to 0.01 us; the rule compared them unrounded.
    EXPECT_GT(drop->fastest_us + 0.005, drop->factor * (drop->reference_us - 0.005)) << c.reason;
    const core::ChoiceResult* ref = nullptr;
    for (const auto& o : r.choices)
      if (o.name == drop->reference) ref = &o;
    ASSERT_NE(ref, nullptr) << c.reason;
    EXPECT_EQ(ref->status, core::ChoiceStatus::kOk) << c.reason;
    if (!short_rounds) EXPECT_NEAR(ref->max_us, drop->reference_us, 0.006) << c.reason;
    if (c.name == "test-slow") {
      slow_dropped = true;
      EXPECT_GE(drop->fastest_us, 1e7) << c.reason;  // its 10 s an op
    }
  }
  EXPECT_TRUE(slow_dropped) << r.Key() << ": test-slow was not dropped";
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
    // Every host choice runs on the caller's buffers: the winner is the any-buffer choice.
    ASSERT_TRUE(r.any_buffer.has_value()) << r.Key();
    EXPECT_EQ(r.any_buffer->choice, r.winner) << r.Key();
    EXPECT_DOUBLE_EQ(r.any_buffer->time_us, r.time_us) << r.Key();
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

// `--redop avg` (ncclAvg, FSDP2's reduce-scatters): three ranks, so floats divide inexactly
// and integers truncate; every choice is verified against the host reference and the
// records are keyed, listed and looked up under "avg", apart from sum's.
TEST_F(TuneJobTest, AvgIsTunedVerifiedAndPublishedUnderItsOwnKeys) {
  auto run = RunCcltune({"tune",
                         "--ranks",
                         "3",
                         "--backend",
                         "host",
                         "--redis",
                         redis_->url(),
                         "--op",
                         "allReduce,reduceScatter",
                         "--redop",
                         "avg",
                         "--dtypes",
                         "fp32,int32,bf16",
                         "--sizes",
                         "4KiB,64KiB",
                         "--iters",
                         "3",
                         "--rounds",
                         "2",
                         "--warmup",
                         "1",
                         "--search",
                         "exhaustive"},
                        {}, 300);
  ASSERT_EQ(run.code, 0) << run.output;
  core::ResultStore store(*client_);
  auto fps = store.Fingerprints();
  ASSERT_TRUE(fps.ok() && fps->size() == 1u);
  auto records = store.List(fps->front());
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  ASSERT_EQ(records->size(), 12u);  // 2 ops x 3 dtypes x 2 sizes
  for (const auto& r : *records) {
    EXPECT_EQ(r.redop, core::RedOp::kAvg) << r.Key();
    EXPECT_NE(r.Key().find(":avg:"), std::string::npos) << r.Key();
    for (const auto& c : r.choices) EXPECT_EQ(c.status, core::ChoiceStatus::kOk) << r.Key();
  }
  auto avg = RunCcltune({"results", "--redis", redis_->url(), "--op", "reduceScatter", "--dtype",
                         "int32", "--redop", "avg", "--bytes", "65536"});
  ASSERT_EQ(avg.code, 0) << avg.output;
  EXPECT_NE(avg.output.find("\"redop\": \"avg\""), std::string::npos) << avg.output;
  auto sum = RunCcltune({"results", "--redis", redis_->url(), "--op", "reduceScatter", "--dtype",
                         "int32", "--bytes", "65536"});
  EXPECT_EQ(sum.code, 1) << "sum was never tuned: " << sum.output;
  EXPECT_NE(sum.output.find("nothing tuned for that problem"), std::string::npos) << sum.output;
}

// The adaptive search (the default, issue 25): the default choice and every winner are
// measured in full and verified; a dropped choice is listed as pruned, without a time, with
// the evidence; records, the summary and `-v` say which search ran and where its time went.
// Which real choices are dropped depends on the machine and its load; that `test-slow` is,
// and that every drop follows the rule, does not.
TEST_F(TuneJobTest, AdaptiveSearchPrunesWithReasonsAndPublishesOnlyFullMeasurements) {
  RunResult run;
  const auto summary = TuneAllReduceAdaptive("1KiB:1MiB:4", "5", run);
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("# search adaptive: screening "), std::string::npos) << run.output;
  EXPECT_EQ(summary["search"], "adaptive");
  EXPECT_GT(summary["timing"]["screeningS"].get<double>(), 0);
  EXPECT_GT(summary["timing"]["fullS"].get<double>(), 0);
  ASSERT_EQ(summary["records"].size(), 6u) << run.output;  // 1 KiB, 4 KiB, ..., 1 MiB
  int pruned = 0;
  for (const auto& j : summary["records"]) {
    auto r = core::ResultFromJson(j);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->search, core::Search::kAdaptive);
    ExpectWinnerRule(*r, 3.0);
    EXPECT_NE(r->winner, "test-slow");
    // 5 iterations are too few for short rounds (5 / 4 < 5): full-length screening.
    ExpectDropsFollowTheRule(*r, false, &pruned);
    for (const auto& c : r->choices) {
      if (c.status != core::ChoiceStatus::kPruned) continue;
      EXPECT_NE(run.output.find("pruned: " + c.reason.substr(0, 60)), std::string::npos)
          << run.output;
    }
  }
  // Every choice but the default is screened (the default is a reference from the start).
  EXPECT_EQ(summary["screening"]["screened"], 4 * 6) << run.output;
  EXPECT_EQ(summary["screening"]["pruned"], pruned);
  EXPECT_GE(pruned, 6);
  core::ResultStore store(*client_);
  auto fps = store.Fingerprints();
  ASSERT_TRUE(fps.ok() && fps->size() == 1u);
  auto records = store.List(fps->front());
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  ASSERT_EQ(records->size(), 6u);
  for (const auto& r : *records) EXPECT_EQ(r.search, core::Search::kAdaptive) << r.Key();
}

// Issue 43: where the winner needs pooled buffers, the fastest choice a program's own buffers
// run is measured in full anyway and kept beside it. `test-pooled` (the ring reported 100x
// faster than it ran; core/apply/any_buffer.h holds it to pooled buffers) is screened before
// `test-fast` (the ring reported 10x faster, any buffer) at every size: catalog order, then the
// ranking of the size before. Were test-fast judged against test-pooled, its screening rounds
// (10x slower) would drop it on any machine and load, and the record would keep a real host
// choice instead. Both margins are 10x, far beyond what load does to 4 loopback ranks.
TEST_F(TuneJobTest, AdaptiveSearchMeasuresTheFastestAnyBufferChoiceBesideAPooledWinner) {
  const std::string json = dir_.File("summary.json");
  const auto run = RunCcltune(
      HostTuneArgs(4, redis_->url(),
                   {"--op", "allReduce", "--sizes", "1KiB:16KiB:4", "--iters", "5", "--rounds", "3",
                    "--warmup", "1", "--choices", "ring,recursive-doubling,test-pooled,test-fast",
                    "-v", "--json", json}),
      {{"CCLTUNE_ENABLE_TEST_CHOICES", "1"}}, 300);
  ASSERT_EQ(run.code, 0) << run.output;
  const auto summary = nlohmann::json::parse(ReadFile(json));
  ASSERT_EQ(summary["records"].size(), 3u) << run.output;  // 1 KiB, 4 KiB, 16 KiB
  for (const auto& j : summary["records"]) {
    auto r = core::ResultFromJson(j);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->winner, "test-pooled") << r->Key();
    const core::ChoiceResult* fast = nullptr;
    for (const auto& c : r->choices) {
      if (c.name == "test-fast") fast = &c;
      // Any-buffer choices are judged by any-buffer references only.
      if (c.status == core::ChoiceStatus::kPruned)
        EXPECT_EQ(c.reason.find("test-pooled"), std::string::npos) << r->Key() << ": " << c.reason;
    }
    ASSERT_NE(fast, nullptr) << r->Key();
    ASSERT_EQ(fast->status, core::ChoiceStatus::kOk) << r->Key() << ": " << fast->reason;
    ASSERT_TRUE(r->any_buffer.has_value()) << r->Key();
    EXPECT_EQ(r->any_buffer->choice, "test-fast") << r->Key();
    EXPECT_DOUBLE_EQ(r->any_buffer->time_us, fast->time_us) << r->Key();
    EXPECT_NEAR(r->any_buffer->speedup_vs_default, r->default_time_us / fast->time_us, 1e-9);
    EXPECT_NE(r->any_buffer->choice, r->winner);
  }
  // The table of `ccltune tune`, and of `ccltune results` from the cache, names it on each row.
  for (const std::string& out :
       {run.output, RunCcltune({"results", "--redis", redis_->url()}).output}) {
    EXPECT_NE(out.find("any buffer (time(us), speedup)"), std::string::npos) << out;
    EXPECT_EQ(CountLines(out, std::regex(R"(test-pooled .*x  test-fast [0-9.]+ [0-9.]+x$)")), 3)
        << out;
  }
  // A lookup and the JSON export carry the record field.
  auto one = RunCcltune({"results", "--redis", redis_->url(), "--op", "allReduce", "--dtype",
                         "fp32", "--bytes", "4096"});
  ASSERT_EQ(one.code, 0) << one.output;
  EXPECT_NE(one.output.find("\"anyBuffer\": {"), std::string::npos) << one.output;
  const std::string file = dir_.File("export.json");
  auto exported =
      RunCcltune({"export", "--format", "json", "--redis", redis_->url(), "--output", file});
  ASSERT_EQ(exported.code, 0) << exported.output;
  const auto array = nlohmann::json::parse(ReadFile(file), nullptr, false);
  ASSERT_TRUE(array.is_array() && array.size() == 3u) << ReadFile(file);
  for (const auto& rec : array) EXPECT_EQ(rec["anyBuffer"]["choice"], "test-fast") << rec.dump();
}

// Short screening rounds (iters/4, here 5 of 20) once the group's default took >= 100 µs an
// op at a smaller size: then every choice is screened, the default too, and drops say the
// rounds' length; otherwise (the first size always) full-length rounds, without the default.
// Whether a size gets short rounds is read from the record before it, so the rule is checked
// on any machine. That short rounds happen at all needs a 64 KiB or 256 KiB all-reduce of 4 host
// ranks (TCP over loopback) to take >= 100 µs an op: 366 and 483 µs on the idle 2-core machine
// here, and load only makes them longer.
TEST_F(TuneJobTest, AdaptiveSearchScreensWithShortRoundsWhereOpsAreLong) {
  RunResult run;
  const auto summary = TuneAllReduceAdaptive("64KiB:1MiB:4", "20", run);
  ASSERT_EQ(run.code, 0) << run.output;
  ASSERT_EQ(summary["records"].size(), 3u);
  int pruned = 0, screened = 0, short_sizes = 0;
  double previous_default_us = 0;
  for (const auto& j : summary["records"]) {
    auto r = core::ResultFromJson(j);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ExpectWinnerRule(*r, 3.0);
    const bool short_rounds = previous_default_us >= core::kShortScreeningMinOpUs;
    ExpectDropsFollowTheRule(*r, short_rounds, &pruned);
    screened += short_rounds ? 5 : 4;
    short_sizes += short_rounds;
    previous_default_us = r->default_time_us;
  }
  EXPECT_EQ(summary["screening"]["screened"], screened) << run.output;
  EXPECT_EQ(summary["screening"]["pruned"], pruned) << run.output;
  EXPECT_GE(short_sizes, 1) << run.output;
  // The parts of rank 0's tuning loop are disjoint intervals inside it, each timed on its own;
  // the loop runs inside the process whose whole life this test timed.
  const auto& t = summary["timing"];
  double parts = 0;
  for (const char* part : {"prepareS", "warmupS", "verifyS", "barriersS", "timedRunsS"}) {
    EXPECT_GT(t[part].get<double>(), 0) << part;
    parts += t[part].get<double>();
  }
  const double tuning = t["tuningS"].get<double>();
  EXPECT_LE(parts, tuning + 1e-6) << t.dump();
  EXPECT_LE(t["screeningS"].get<double>() + t["fullS"].get<double>(), tuning + 1e-6) << t.dump();
  EXPECT_LT(tuning, run.seconds) << t.dump();
  EXPECT_GE(t["warmupVerifyS"].get<double>(), t["verifyS"].get<double>()) << t.dump();
  EXPECT_LE(t["warmupVerifyS"].get<double>() + t["barriersS"].get<double>() +
                t["timedRunsS"].get<double>(),
            tuning + 1e-6)
      << t.dump();
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
    std::vector<std::string> args =
        HostTuneArgs(4, redis_->url(),
                     {"--op", "allReduce", "--sizes", "4KiB", "--iters", "2", "--rounds", "1",
                      "--json", dir_.File("summary.json")});
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
// one network namespace) warns and tunes on instead of failing the job. The warning is one
// line naming the flag, the port and the rank, not civetweb's own words.
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
  const std::string port = std::to_string(taken);
  EXPECT_NE(run.output.find("ccltune: --metrics-port-base " + port + ": port " + port +
                            " on 0.0.0.0 is in use (Address already in use); rank 0 serves no "
                            "/metrics\n"),
            std::string::npos)
      << run.output;
  EXPECT_EQ(run.output.find("serves no /metrics"), run.output.rfind("serves no /metrics"))
      << "one line, once: " << run.output;
  EXPECT_EQ(run.output.find("Civet"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace ccltune::testing

// What a new user reads from `ccltune` (issue 62's rough edges), each run as a real process
// against a real redis-server: a listing of nothing says where it looked, a job file for GPUs
// is refused on a machine without one, a timed-out choice says how long it ran, NOAUTH names
// the flag and variable for a password, a second tune on one cache says what it waits for, no
// command points to --help, an export to a file says what it wrote, counts agree with their
// nouns, an unreadable plan file names the OS's reason, a choice without a time has no
// bandwidth either, summaries carry sensible precision, and per-rank node lines wait for -v.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "core/results/result_store.h"
#include "tests/integration/ccltune_process.h"
#include "tests/support/redis_test.h"
#include "worker/launcher/local_redis.h"
#include "worker/rank/backend_factory.h"

namespace ccltune::testing {
namespace {

int CountMatches(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  return static_cast<int>(
      std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

// One measured problem: enough for a cache that is not empty.
core::ResultRecord OneRecord(const std::string& fp) {
  core::ResultRecord r;
  r.fingerprint = fp;
  r.op = core::Op::kAllReduce;
  r.dtype = core::Dtype::kFp32;
  r.redop = core::RedOp::kSum;
  r.bytes = 4096;
  r.winner = "ring";
  r.time_us = r.default_time_us = 50;
  r.busbw_gbs = 0.1;
  core::ChoiceResult ring;
  ring.name = "ring";
  ring.time_us = ring.min_us = ring.max_us = 50;
  ring.busbw_gbs = 0.1;
  r.choices.push_back(ring);
  r.world_size = 2;
  r.tuned_at = "2026-01-01T00:00:00Z";
  r.job_id = "job";
  r.tool_version = "test";
  return r;
}

class CliMessagesTest : public RedisTest {
 protected:
  void Publish(const std::string& fp) {
    core::ResultStore store(*client_);
    ASSERT_TRUE(store.Publish(fp, R"({"backend":"host","nodes":1})", {OneRecord(fp)}).ok());
  }
  // "redis://127.0.0.1:PORT/0", as the messages name the cache.
  std::string Url() const { return redis_->url(); }
  // `ccltune tune` on 2 host ranks, one allReduce size, the ring, direct and `test-slow` (which
  // the adaptive search always drops): a job of one problem with a pruned choice.
  RunResult TuneOneProblem(const std::vector<std::string>& more) {
    std::vector<std::string> args{"--op",     "allReduce", "--sizes",   "4KiB",
                                  "--iters",  "2",         "--rounds",  "3",
                                  "--warmup", "1",         "--choices", "ring,direct,test-slow"};
    args.insert(args.end(), more.begin(), more.end());
    return RunCcltune(HostTuneArgs(2, Url(), args), {{"CCLTUNE_ENABLE_TEST_CHOICES", "1"}}, 180);
  }
  TempDir dir_{"ccltune-cli"};
};

// 1. A listing of nothing, an unknown fingerprint and an untuned problem each say what was
// looked for and where; only the fingerprint asked by name that is not there is an error (2).
TEST_F(CliMessagesTest, ResultsSaysWhatItLookedForAndWhere) {
  auto r = RunCcltune({"results", "--redis", Url()}, {}, 60);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(NonEmptyLines(r.output),
            std::vector<std::string>{"ccltune results: no results in the cache at " + Url() +
                                     " (run `ccltune tune` to fill it)"});
  r = RunCcltune({"results", "--redis", Url(), "--json"}, {}, 60);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("[]"), std::string::npos) << r.output;
  r = RunCcltune({"results", "--redis", Url(), "--fingerprint", "cccc000000000003"}, {}, 60);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--fingerprint cccc000000000003 is not in the cache at " + Url() +
                          " (it holds no results)"),
            std::string::npos)
      << r.output;

  Publish("aaaa000000000001");
  r = RunCcltune({"results", "--redis", Url(), "--fingerprint", "cccc000000000003"}, {}, 60);
  EXPECT_EQ(r.code, 2) << r.output;
  ASSERT_EQ(NonEmptyLines(r.output).size(), 1u) << r.output;
  EXPECT_NE(r.output.find("--fingerprint cccc000000000003 is not in the cache at " + Url() +
                          " (it holds aaaa000000000001)"),
            std::string::npos)
      << r.output;
  r = RunCcltune({"results", "--redis", Url(), "--fingerprint", "aaaa000000000001", "--epilogue",
                  "residualRmsNorm,hidden=4096"},
                 {}, 60);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("ccltune results: no results for fingerprint aaaa000000000001 with "
                          "epilogue residualRmsNorm,hidden=4096 in the cache at " +
                          Url()),
            std::string::npos)
      << r.output;
  r = RunCcltune(
      {"results", "--redis", Url(), "--op", "allGather", "--dtype", "fp32", "--bytes", "4096"}, {},
      60);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("nothing tuned for that problem (allGather fp32, any size) in "
                          "fingerprint aaaa000000000001 of the cache at " +
                          Url() + "; NCCL's default applies"),
            std::string::npos)
      << r.output;
  r = RunCcltune({"results", "--redis", Url()}, {}, 60);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("# allReduce fp32 sum, 2 ranks, fingerprint aaaa000000000001"),
            std::string::npos)
      << r.output;
}

// 2. A CollectiveTuningJob for GPUs (backend nccl, worldSize, cudaGraph, sizes to 64 MiB) on a
// machine without one: one line naming the field, before anything runs; a host run with CUDA
// graphs likewise; a host job's worldSize is its rank count.
TEST_F(CliMessagesTest, AJobForGpusIsRefusedWhereThereIsNone) {
  if (worker::VisibleGpuCount() > 0) GTEST_SKIP() << "a GPU is visible: the job would run";
  const std::string job = WritePlan(dir_, "job.yaml", R"(apiVersion: ccltune.io/v1alpha1
kind: CollectiveTuningJob
metadata: {name: gpus}
spec:
  worldSize: 8
  gpusPerPod: 8
  backend: nccl
  collectives:
  - {op: allReduce, dtypes: [bf16], reduceOp: sum, sizes: {min: 1KiB, max: 64MiB, factor: 2}}
  benchmark: {iters: 20, rounds: 5, cudaGraph: true}
)");
  auto r = RunCcltune({"tune", "--plan", job, "--redis", Url()}, {}, 60);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_LT(r.seconds, 10) << "it ran instead of refusing: " << r.output;
  EXPECT_EQ(NonEmptyLines(r.output),
            std::vector<std::string>{
                "ccltune: error: spec.backend (" + job +
                "): nccl needs a GPU, and none is visible to this process (allowed here: host; "
                "pass --backend host to tune the plan's collectives over TCP instead)"});
  r = RunCcltune({"tune", "--plan", job, "--backend", "host", "--redis", Url()}, {}, 60);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_EQ(NonEmptyLines(r.output),
            std::vector<std::string>{"ccltune: error: spec.benchmark.cudaGraph (" + job +
                                     "): CUDA graphs need the nccl backend, and this run's "
                                     "backend is host (--backend host); drop it to tune the "
                                     "host backend"});
  r = RunCcltune({"tune", "--backend", "host", "--cuda-graph", "--redis", Url()}, {}, 60);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--cuda-graph: CUDA graphs need the nccl backend"), std::string::npos)
      << r.output;

  const std::string host_job = WritePlan(dir_, "host.yaml", R"(kind: CollectiveTuningJob
spec:
  worldSize: 3
  backend: host
  collectives: [{op: allReduce, sizes: [4096]}]
  benchmark: {warmupIters: 1, iters: 2, rounds: 2}
)");
  r = RunCcltune({"tune", "--plan", host_job, "--redis", Url(), "--no-publish"}, {}, 120);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find(", 3 ranks, backend host, Redis " + Url()), std::string::npos)
      << r.output;
}

// 2. A choice whose deadline runs out mid-transfer (the 16 MiB ring, 50 iterations a round,
// a 0.5 s choice timeout): the reason leads with how long the choice ran against its bound,
// not a peer's "no data for 0.0 s".
TEST_F(CliMessagesTest, ATimedOutChoiceSaysHowLongItRan) {
  const std::string json = dir_.File("summary.json");
  auto r = RunCcltune(HostTuneArgs(2, Url(),
                                   {"--op", "allReduce", "--sizes", "16MiB", "--choices", "ring",
                                    "--iters", "50", "--rounds", "3", "--warmup", "1",
                                    "--choice-timeout", "0.5", "--no-publish", "--json", json}),
                      {}, 180);
  ASSERT_EQ(r.code, 0) << r.output;
  const auto summary = nlohmann::json::parse(ReadFile(json));
  const auto& ring = summary["records"][0]["choices"][0];
  ASSERT_EQ(ring["status"], "timeout") << ring.dump();
  const std::string reason = ring["reason"];
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      reason, m,
      std::regex(R"(choice timeout: still running after ([0-9.]+) s, past choiceTimeoutSeconds )"
                 R"(0\.5 s)")))
      << reason;
  EXPECT_GE(std::stod(m[1]), 0.49) << reason;
  EXPECT_LT(std::stod(m[1]), 10) << reason;
  EXPECT_NE(reason.find("deadline passed in "), std::string::npos) << reason;
  EXPECT_EQ(reason.find("s in allReduce"), std::string::npos) << "the old form: " << reason;
}

// 3. A Redis with a password, asked without one or with a wrong one: the line says how to
// give it, for the commands that read the cache and for tune.
TEST_F(CliMessagesTest, NoAuthNamesTheFlagAndTheVariable) {
  auto locked = RedisServer::Start({.password = "sekret"});
  ASSERT_TRUE(locked.ok()) << locked.status().ToString();
  const std::string url = "redis://127.0.0.1:" + std::to_string((*locked)->port()) + "/0";
  const std::string hint = "the Redis at " + url +
                           " requires a password (NOAUTH): give it in the URL, --redis "
                           "redis://:PASSWORD@127.0.0.1:" +
                           std::to_string((*locked)->port()) +
                           "/0, or in env CCLTUNE_REDIS_PASSWORD";
  auto r = RunCcltune({"results", "--redis", url}, {}, 60);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_EQ(NonEmptyLines(r.output), std::vector<std::string>{"ccltune: error: " + hint});
  r = RunCcltune(HostTuneArgs(2, url, {"--op", "allReduce", "--sizes", "4096"}), {}, 60);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_EQ(NonEmptyLines(r.output), std::vector<std::string>{"ccltune tune: error: " + hint});
  r = RunCcltune({"export", "--format", "json", "--redis", url},
                 {{"CCLTUNE_REDIS_PASSWORD", "wrong"}}, 60);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("the Redis at " + url + " refused the password (WRONGPASS)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("CCLTUNE_REDIS_PASSWORD"), std::string::npos) << r.output;
  r = RunCcltune({"results", "--redis", url}, {{"CCLTUNE_REDIS_PASSWORD", "sekret"}}, 60);
  EXPECT_EQ(r.code, 0) << r.output;
}

// 5. A second tune on a cache directory whose private Redis is in use says, at once, what it
// waits for and for how long; it runs when the directory is free.
TEST_F(CliMessagesTest, ASecondTuneSaysWhatItWaitsFor) {
  const std::string cache = dir_.File("cache");
  std::filesystem::create_directories(cache + "/redis");
  const int fd = ::open((cache + "/redis/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  const std::string holder = "redis-server pid 4242 of ccltune tune pid 4240";
  ASSERT_EQ(::pwrite(fd, holder.data(), holder.size(), 0), static_cast<ssize_t>(holder.size()));
  const std::string log = dir_.File("second.log");
  auto tune = StartCcltune({"tune", "--ranks", "2", "--backend", "host", "--op", "allReduce",
                            "--sizes", "4096", "--iters", "2", "--rounds", "2", "--warmup", "1"},
                           {{"CCLTUNE_CACHE_DIR", cache}}, log);
  const std::string said = "ccltune: the private Redis in " + cache + "/redis is in use by " +
                           holder + "; waiting up to 10 s for it to end";
  const auto deadline = worker::DeadlineIn(worker::kLockWaitSeconds / 2);
  while (ReadFile(log).find(said) == std::string::npos && !worker::Expired(deadline))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_NE(ReadFile(log).find(said), std::string::npos)
      << "not said within half the wait: " << ReadFile(log);
  ::close(fd);  // the first job ends: the second runs
  auto code = tune.Wait(worker::DeadlineIn(120));
  ASSERT_TRUE(code.ok()) << ReadFile(log);
  EXPECT_EQ(*code, 0) << ReadFile(log);
}

// 6. `ccltune` alone, and a bad flag, point to --help.
TEST_F(CliMessagesTest, NoCommandPointsToHelp) {
  auto r = RunCcltune({}, {}, 30);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_EQ(NonEmptyLines(r.output),
            std::vector<std::string>{"ccltune: error: no command given: one of tune, worker, "
                                     "results, export, report, check-plugin, check-nccl "
                                     "(`ccltune --help` lists them, `ccltune tune --help` a "
                                     "command's flags)"});
  r = RunCcltune({"tune", "--turbo"}, {}, 30);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--turbo"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(`ccltune tune --help` lists the flags)"), std::string::npos)
      << r.output;
}

// 7, 8. An export to a file says what it wrote; the report too; one record, one problem.
TEST_F(CliMessagesTest, ExportAndReportToAFileSayWhatTheyWrote) {
  Publish("aaaa000000000001");
  const std::string out = dir_.File("winners.json");
  auto r = RunCcltune({"export", "--redis", Url(), "--format", "json", "-o", out}, {}, 60);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(NonEmptyLines(r.output),
            std::vector<std::string>{"ccltune export: wrote " + out +
                                     " (json, 1 record of fingerprint aaaa000000000001)"});
  EXPECT_EQ(nlohmann::json::parse(ReadFile(out)).size(), 1u);
  const std::string page = dir_.File("report.html");
  r = RunCcltune({"report", "--redis", Url(), "--html", page}, {}, 60);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(
      r.output.find("ccltune report: wrote " + page + " (1 problem, fingerprint aaaa000000000001)"),
      std::string::npos)
      << r.output;
  EXPECT_NE(ReadFile(page).find("allReduce fp32 sum, 2 ranks"), std::string::npos);
}

// 9. A plan file that cannot be read: the file and the OS's reason, one line, exit 2.
TEST_F(CliMessagesTest, AnUnreadablePlanFileNamesTheReason) {
  const std::string missing = dir_.File("missing.yaml");
  const std::string folder = dir_.File("a-folder");
  std::filesystem::create_directories(folder);
  for (const auto& [path, reason] : {std::pair{missing, std::string("No such file or directory")},
                                     std::pair{folder, std::string("Is a directory")}}) {
    auto r = RunCcltune({"tune", "--backend", "host", "--plan", path}, {}, 30);
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_EQ(
        NonEmptyLines(r.output),
        std::vector<std::string>{"ccltune: error: plan file: cannot read " + path + ": " + reason});
  }
}

// 8, 10, 11, 12. A job of one problem: counts agree with their nouns; the pruned choice has a
// null bandwidth beside its null time (in the summary and in the cache); the summary's sync
// figures carry three decimals; the per-rank node lines show only with -v.
TEST_F(CliMessagesTest, AOneProblemJobReadsRight) {
  const std::string json = dir_.File("summary.json");
  auto r = TuneOneProblem({"--json", json});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find(": 2 ranks, backend host, fingerprint "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(", 1 problem, 1 published"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("1 problems"), std::string::npos) << r.output;
  EXPECT_EQ(CountMatches(r.output, R"(\] node \S+ \(from )"), 0) << "not quiet: " << r.output;

  const auto summary = nlohmann::json::parse(ReadFile(json));
  int timeless = 0;
  for (const auto& c : summary["records"][0]["choices"]) {
    EXPECT_EQ(c["timeUs"].is_null(), c["busbwGBs"].is_null()) << c.dump();
    timeless += c["timeUs"].is_null() ? 1 : 0;
    if (c["name"] == "test-slow") EXPECT_EQ(c["status"], "pruned") << c.dump();
  }
  EXPECT_GE(timeless, 1) << summary["records"][0].dump();
  const std::regex three_decimals(R"(-?[0-9]+(\.[0-9]{1,3})?)");
  for (const auto* k : {"waitMs", "waitMsMedian", "skewMs"}) {
    const std::string text = summary["presync"][k].dump();
    EXPECT_TRUE(std::regex_match(text, three_decimals)) << k << ": " << text;
  }
  for (const auto* k : {"medianUs", "maxUs"}) {
    const std::string text = summary["barrier"][k].dump();
    EXPECT_TRUE(std::regex_match(text, three_decimals)) << k << ": " << text;
  }
  auto cached = RunCcltune({"results", "--redis", Url(), "--json"}, {}, 60);
  ASSERT_EQ(cached.code, 0) << cached.output;
  const auto records = nlohmann::json::parse(cached.output);
  ASSERT_EQ(records.size(), 1u) << cached.output;
  for (const auto& c : records[0]["choices"]) {
    if (c["status"] == "pruned") EXPECT_TRUE(c["busbwGBs"].is_null()) << c.dump();
  }

  r = TuneOneProblem({"-v", "--no-publish"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(CountMatches(r.output, R"(\] node \S+ \(from )"), 2) << r.output;
  // -v's lines per choice: the winner row's precision, not a cut-off to_string.
  EXPECT_EQ(
      CountMatches(r.output, R"( ring +[0-9]+\.[0-9]{2} +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3}  ok)"),
      1)
      << r.output;
}

}  // namespace
}  // namespace ccltune::testing

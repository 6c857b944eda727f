// Fault cases of a local job (issue 2): each ends within a bound with a clear message and
// leaves nothing partial in Redis.
#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "core/results/result_store.h"
#include "tests/integration/ccltune_process.h"
#include "tests/integration/job_test.h"
#include "tests/support/free_port.h"

namespace ccltune::testing {
namespace {

using worker::ChildProcess;
using worker::DeadlineIn;

class FaultTest : public JobTest {
 protected:
  std::vector<ChildProcess> StartWorkers(const std::string& job, const std::string& plan,
                                         const std::vector<int>& ranks, int world) {
    std::vector<ChildProcess> out;
    for (int r : ranks)
      out.push_back(StartCcltune(
          {"worker", "--rank", std::to_string(r), "--world-size", std::to_string(world), "--job-id",
           job, "--redis", redis_->url(), "--plan", plan},
          {}, dir_.File("rank" + std::to_string(r) + ".log")));
    return out;
  }

  TempDir dir_{"ccltune-fault"};
};

TEST_F(FaultTest, RankKilledMidBenchmarkEndsTheJobAndPublishesNothing) {
  const auto plan = WritePlan(dir_, "plan.yaml", kLongPlan);
  auto workers = StartWorkers("killed", plan, {0, 1, 2, 3}, 4);
  WaitForProgress("killed", 2, 60);
  workers[2].Signal(SIGKILL);
  const auto killed_at = worker::Clock::now();
  for (int r : {0, 1, 3}) {
    auto code = workers[r].Wait(DeadlineIn(5 + 5 + 1));
    ASSERT_TRUE(code.ok()) << "rank " << r << " still running 11 s after the kill";
    EXPECT_NE(*code, 0);
    const auto log = ReadFile(dir_.File("rank" + std::to_string(r) + ".log"));
    EXPECT_NE(log.find("rank 2"), std::string::npos) << "rank " << r << ": " << log;
  }
  const double took = std::chrono::duration<double>(worker::Clock::now() - killed_at).count();
  EXPECT_LT(took, 10.0);
  EXPECT_EQ(CountKeys("ccltune:v1:result:*"), 0u);
  EXPECT_EQ(CountKeys("ccltune:v1:job:killed:0:published"), 0u);
  EXPECT_EQ(CountKeys("ccltune:v1:job:killed:0:summary"), 0u);
}

TEST_F(FaultTest, RankThatNeverStartsFailsTheRendezvousNamingIt) {
  const auto plan = WritePlan(dir_, "plan.yaml", R"(
collectives: [{op: allReduce, sizes: [4096]}]
benchmark: {rendezvousTimeoutSeconds: 3}
)");
  auto workers = StartWorkers("missing", plan, {0, 1, 2}, 4);
  for (int r : {0, 1, 2}) {
    auto code = workers[r].Wait(DeadlineIn(3 + 10));
    ASSERT_TRUE(code.ok()) << "rank " << r << " did not give up";
    EXPECT_NE(*code, 0);
    const auto log = ReadFile(dir_.File("rank" + std::to_string(r) + ".log"));
    EXPECT_NE(log.find("missing ranks: 3"), std::string::npos) << log;
  }
  EXPECT_EQ(CountKeys("ccltune:v1:result:*"), 0u);
}

TEST_F(FaultTest, LateRankFailsThePreSyncWindowNamingIt) {
  auto run = RunCcltune(
      {"tune", "--ranks", "3", "--backend", "host", "--redis", redis_->url(), "--op", "allReduce",
       "--sizes", "4096", "--presync-window", "1"},
      {{"CCLTUNE_TEST_PRESYNC_DELAY_RANK", "2"}, {"CCLTUNE_TEST_PRESYNC_DELAY_SECONDS", "3"}}, 60);
  EXPECT_NE(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("PreSyncTimeout: ranks 2 did not arrive"), std::string::npos)
      << run.output;
  EXPECT_LT(run.seconds, 30);
  EXPECT_EQ(CountKeys("ccltune:v1:result:*"), 0u);
}

TEST_F(FaultTest, UnreachableRedisIsReportedClearly) {
  const int port = FreePort();
  const std::string url = "redis://127.0.0.1:" + std::to_string(port) + "/0";
  auto run = RunCcltune({"tune", "--ranks", "2", "--backend", "host", "--redis", url}, {}, 60);
  EXPECT_EQ(run.code, 1) << run.output;
  EXPECT_NE(run.output.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << run.output;
  EXPECT_LT(run.seconds, 30);
}

TEST_F(FaultTest, RedisRestartedMidJobIsRiddenOut) {
  const auto plan = WritePlan(dir_, "plan.yaml", kLongPlan);
  auto tune = StartCcltune({"tune", "--ranks", "3", "--backend", "host", "--redis", redis_->url(),
                            "--plan", plan, "--job-id", "restart"},
                           {}, dir_.File("tune.log"));
  WaitForProgress("restart", 2, 60);
  ASSERT_TRUE(redis_->Restart().ok());
  client_ = Connect();
  auto code = tune.Wait(DeadlineIn(240));
  ASSERT_TRUE(code.ok()) << "tune did not finish";
  EXPECT_EQ(*code, 0) << ReadFile(dir_.File("tune.log"));
  EXPECT_EQ(CountKeys("ccltune:v1:result:*"), 13u) << ReadFile(dir_.File("tune.log"));
}

TEST_F(FaultTest, TwoJobsShareOneRedisWithoutMixing) {
  auto a =
      StartCcltune({"tune", "--ranks", "2", "--backend", "host", "--redis", redis_->url(), "--op",
                    "allReduce", "--sizes", "1KiB:64KiB:4", "--json", dir_.File("a.json")},
                   {}, dir_.File("a.log"));
  auto b =
      StartCcltune({"tune", "--ranks", "2", "--backend", "host", "--redis", redis_->url(), "--op",
                    "allGather", "--sizes", "1KiB:64KiB:4", "--json", dir_.File("b.json")},
                   {}, dir_.File("b.log"));
  auto ca = a.Wait(DeadlineIn(180));
  auto cb = b.Wait(DeadlineIn(180));
  ASSERT_TRUE(ca.ok() && cb.ok());
  EXPECT_EQ(*ca, 0) << ReadFile(dir_.File("a.log"));
  EXPECT_EQ(*cb, 0) << ReadFile(dir_.File("b.log"));
  const auto ja = nlohmann::json::parse(ReadFile(dir_.File("a.json")));
  const auto jb = nlohmann::json::parse(ReadFile(dir_.File("b.json")));
  EXPECT_NE(ja["jobId"], jb["jobId"]);
  for (const auto& r : ja["records"]) EXPECT_EQ(r["op"], "allReduce");
  for (const auto& r : jb["records"]) EXPECT_EQ(r["op"], "allGather");
  EXPECT_EQ(ja["records"].size(), 4u);
  EXPECT_EQ(jb["records"].size(), 4u);
  EXPECT_EQ(CountKeys("ccltune:v1:result:*"), 8u);
}

TEST_F(FaultTest, HangingChoiceTimesOutAndTheJobGoesOn) {
  const std::string json = dir_.File("hang.json");
  auto run = RunCcltune({"tune", "--ranks", "3", "--backend", "host", "--redis", redis_->url(),
                         "--op", "allReduce", "--sizes", "4096,65536", "--choices",
                         "ring,test-hang,direct", "--choice-timeout", "2", "--json", json},
                        {{"CCLTUNE_ENABLE_TEST_CHOICES", "1"}}, 120);
  ASSERT_EQ(run.code, 0) << run.output;
  const auto summary = nlohmann::json::parse(ReadFile(json));
  ASSERT_EQ(summary["records"].size(), 2u);
  for (const auto& r : summary["records"]) {
    bool saw_hang = false;
    for (const auto& c : r["choices"]) {
      if (c["name"] == "test-hang") {
        saw_hang = true;
        EXPECT_EQ(c["status"], "timeout") << c.dump();
      } else if (c["name"] == "ring") {
        EXPECT_EQ(c["status"], "ok") << c.dump();  // the default is always measured in full
      } else {  // the adaptive search (the default) may drop a slower one after screening
        EXPECT_TRUE(c["status"] == "ok" || c["status"] == "pruned") << c.dump();
      }
    }
    EXPECT_TRUE(saw_hang);
    EXPECT_NE(r["winner"], "test-hang");
  }
  EXPECT_EQ(CountKeys("ccltune:v1:result:*"), 2u);
  // Two timeouts of 2 s plus the bounded recovery: far below a minute.
  EXPECT_LT(run.seconds, 60);
}

}  // namespace
}  // namespace ccltune::testing

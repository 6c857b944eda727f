// A tune that is cancelled or loses Redis stops at once, cleans up and publishes nothing
// (issue 44): each case ends within its stated bound, with the real binary, real rank
// processes and real redis-servers; the processes left are read from /proc, not from the
// launcher's word.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <thread>

#include "tests/integration/ccltune_process.h"
#include "tests/integration/job_test.h"
#include "tests/integration/process_scan.h"
#include "worker/launcher/launcher.h"
#include "worker/launcher/local_redis.h"
#include "worker/rendezvous/job_control.h"

namespace ccltune::testing {
namespace {

using worker::ChildProcess;
using worker::DeadlineIn;

double Since(worker::Clock::time_point t0) {
  return std::chrono::duration<double>(worker::Clock::now() - t0).count();
}

class CancelTest : public JobTest {
 protected:
  // The private redis-server, by the pid its lock file names (redis-server retitles its
  // command line, so /proc's cmdline does not show its data directory).
  pid_t PrivateServer(double seconds) {
    const auto deadline = DeadlineIn(seconds);
    while (!worker::Expired(deadline)) {
      int pid = 0;
      if (std::sscanf(ReadFile(cache_ + "/redis/lock").c_str(), "redis-server pid %d", &pid) == 1 &&
          Running(pid))
        return pid;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << "no private redis-server named in " << cache_ << "/redis/lock";
    return -1;
  }
  bool GoneWithin(pid_t pid, double seconds) {
    const auto deadline = DeadlineIn(seconds);
    while (Running(pid) && !worker::Expired(deadline))
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return !Running(pid);
  }
  // Waits until `count` rank processes of the job run (the ranks carry `--job-id ID`).
  void WaitForRanks(const std::string& job, std::size_t count, double seconds) {
    const auto deadline = DeadlineIn(seconds);
    while (PidsWithArg(job).size() < count + 1) {  // + the launcher itself
      ASSERT_FALSE(worker::Expired(deadline)) << "the ranks of " << job << " never ran";
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  // A tune on the private Redis once its 4 ranks run; the server's pid in *server.
  ChildProcess StartPrivateTune(const std::string& job, pid_t* server) {
    auto tune = StartTune(job, {}, "tune.log");
    WaitForRanks(job, 4, 30);
    *server = PrivateServer(10);
    return tune;
  }
  ChildProcess StartTune(const std::string& job, const std::vector<std::string>& where,
                         const std::string& log) {
    std::vector<std::string> args{"tune",
                                  "--ranks",
                                  "4",
                                  "--backend",
                                  "host",
                                  "--plan",
                                  WritePlan(dir_, "plan.yaml", kLongPlan),
                                  "--job-id",
                                  job};
    args.insert(args.end(), where.begin(), where.end());
    return StartCcltune(args, {{"CCLTUNE_CACHE_DIR", cache_}}, dir_.File(log));
  }

  TempDir dir_{"ccltune-cancel"};
  std::string cache_ = dir_.File("cache");
};

// Redis killed at problem 3: before, rank 0 waited out a 10 s reconnect per remaining problem
// (275 s for 26 problems). Now the whole job has one bound: kRedisLostAfterSeconds for the
// launcher's own watch, plus the ranks' stop grace.
TEST_F(CancelTest, RedisLostMidTuneEndsTuneWithinOneBoundNamingRedis) {
  auto tune = StartTune("cancel-lost", {"--redis", redis_->url()}, "tune.log");
  WaitForProgress("cancel-lost", 3, 60);
  std::this_thread::sleep_for(std::chrono::seconds(1));  // tune reads progress twice a second
  ASSERT_TRUE(redis_->Kill().ok());
  const auto t0 = worker::Clock::now();
  const double bound = worker::kRedisLostAfterSeconds + worker::kStopGraceSeconds + 3;
  auto code = tune.Wait(DeadlineIn(bound + 30));
  const double took = Since(t0);
  const std::string log = ReadFile(dir_.File("tune.log"));
  ASSERT_TRUE(code.ok()) << "tune still running " << bound + 30 << " s after Redis died\n" << log;
  EXPECT_EQ(*code, 1) << log;
  EXPECT_LT(took, bound) << log;
  const std::string url = "127.0.0.1:" + std::to_string(redis_->port());
  const auto at = log.rfind("ccltune tune: error:");
  ASSERT_NE(at, std::string::npos) << log;
  const std::string last = log.substr(at);
  EXPECT_NE(last.find("Redis"), std::string::npos) << last;
  EXPECT_NE(last.find(url), std::string::npos) << last;
  EXPECT_NE(last.find("while tuning"), std::string::npos) << last;
  EXPECT_TRUE(WaitUntilNoneWithArg("cancel-lost", 2).empty()) << "a rank outlived its launcher";
  std::printf("tune ended %.1f s after Redis was killed (bound %.0f s)\n", took, bound);
}

// A rank that loses Redis on its own (no launcher watching: a pod's rank) ends within the
// bound too, its line naming Redis, its URL and the problem it was tuning.
TEST_F(CancelTest, RankWithoutLauncherNamesTheLostCacheWithinTheBound) {
  const auto plan = WritePlan(dir_, "plan.yaml", kLongPlan);
  std::vector<ChildProcess> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.push_back(
        StartCcltune({"worker", "--rank", std::to_string(r), "--world-size", "2", "--job-id",
                      "cancel-podlost", "--redis", redis_->url(), "--plan", plan},
                     {}, dir_.File("rank" + std::to_string(r) + ".log")));
  WaitForProgress("cancel-podlost", 2, 60);
  ASSERT_TRUE(redis_->Kill().ok());
  const auto t0 = worker::Clock::now();
  // The heartbeat thread's bound, its last call's timeouts (2 s command, 1 s connect), and
  // rank 0's progress write waiting out its own 10 s reconnect deadline at most.
  const double bound = 2 * worker::kRedisLostAfterSeconds + 5;
  for (int r = 0; r < 2; ++r) {
    auto code = ranks[r].Wait(DeadlineIn(bound + 30));
    const std::string log = ReadFile(dir_.File("rank" + std::to_string(r) + ".log"));
    ASSERT_TRUE(code.ok()) << "rank " << r << " still running\n" << log;
    EXPECT_EQ(*code, 1) << log;
    EXPECT_NE(
        log.find("lost the Redis cache at redis://127.0.0.1:" + std::to_string(redis_->port())),
        std::string::npos)
        << log;
    EXPECT_NE(log.find("while tuning allReduce"), std::string::npos) << log;
  }
  EXPECT_LT(Since(t0), bound);
}

TEST_F(CancelTest, SigtermStopsRanksAndPublishesNothing) {
  auto tune = StartTune("cancel-term", {"--redis", redis_->url()}, "tune.log");
  WaitForProgress("cancel-term", 2, 60);
  tune.Signal(SIGTERM);
  const auto t0 = worker::Clock::now();
  const double bound = worker::kStopGraceSeconds + 3;
  auto code = tune.Wait(DeadlineIn(bound + 30));
  const std::string log = ReadFile(dir_.File("tune.log"));
  ASSERT_TRUE(code.ok()) << log;
  EXPECT_EQ(*code, 128 + SIGTERM) << log;
  EXPECT_LT(Since(t0), bound) << log;
  EXPECT_NE(log.find("cancelled by SIGTERM: stopped 4 ranks; nothing was published"),
            std::string::npos)
      << log;
  EXPECT_TRUE(PidsWithArg("cancel-term").empty()) << "a rank survived the cancel";
  // The ranks would have finished in seconds had they lived on: give them the time.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(CountKeys("ccltune:v1:result:*"), 0u);
  EXPECT_EQ(CountKeys("ccltune:v1:job:cancel-term:0:published"), 0u);
  EXPECT_EQ(CountKeys("ccltune:v1:cancelled:cancel-term"), 1u);
}

TEST_F(CancelTest, SigintStopsThePrivateRedisToo) {
  pid_t server = -1;
  auto tune = StartPrivateTune("cancel-int", &server);
  ASSERT_GT(server, 0);
  tune.Signal(SIGINT);
  const double bound = worker::kStopGraceSeconds + 5 + 3;  // ranks, then Redis's own grace
  auto code = tune.Wait(DeadlineIn(bound));
  const std::string log = ReadFile(dir_.File("tune.log"));
  ASSERT_TRUE(code.ok()) << log;
  EXPECT_EQ(*code, 128 + SIGINT) << log;
  EXPECT_NE(log.find("stopped 4 ranks and the private Redis"), std::string::npos) << log;
  EXPECT_TRUE(PidsWithArg("cancel-int").empty());
  EXPECT_FALSE(Running(server)) << "the private redis-server outlived tune";
}

// kill -9 of the launcher: its ranks (SIGKILL) and its private redis-server (SIGTERM) get the
// parent-death signal; the server holds the directory's lock until it is gone, so a second
// tune started at once waits for it instead of running a second server on the same data.
TEST_F(CancelTest, KillNineLeavesNoOrphanAndASecondTuneWaitsForTheDirectory) {
  pid_t server = -1;
  auto tune = StartPrivateTune("cancel-nine", &server);
  ASSERT_GT(server, 0);
  tune.Signal(SIGKILL);
  auto second = RunCcltune({"tune", "--ranks", "2", "--backend", "host", "--op", "allReduce",
                            "--sizes", "4096", "--job-id", "second"},
                           {{"CCLTUNE_CACHE_DIR", cache_}}, 60);
  EXPECT_TRUE(WaitUntilNoneWithArg("cancel-nine", 5).empty()) << "a rank outlived kill -9";
  EXPECT_EQ(second.code, 0) << second.output;
  EXPECT_TRUE(GoneWithin(server, 5)) << "the first redis-server lives on";
  std::printf("second tune on the same directory: %.1f s\n", second.seconds);
}

TEST_F(CancelTest, ASecondTuneRefusesADirectoryInUseNamingItsHolder) {
  const std::string dir = cache_ + "/redis";
  std::filesystem::create_directories(dir);
  const int fd = ::open((dir + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  const std::string holder = "redis-server pid 4242 of ccltune tune pid 4240";
  ASSERT_EQ(::pwrite(fd, holder.data(), holder.size(), 0), static_cast<ssize_t>(holder.size()));
  auto run = RunCcltune(
      {"tune", "--ranks", "2", "--backend", "host", "--op", "allReduce", "--sizes", "4096"},
      {{"CCLTUNE_CACHE_DIR", cache_}}, 60);
  ::close(fd);
  EXPECT_EQ(run.code, 1) << run.output;
  EXPECT_NE(run.output.find("is in use by " + holder), std::string::npos) << run.output;
  EXPECT_GE(run.seconds, worker::kLockWaitSeconds - 0.5);
  EXPECT_LT(run.seconds, worker::kLockWaitSeconds + 5);
}

}  // namespace
}  // namespace ccltune::testing

// Unit tests of issue 44's controller parts: why a pod failed (the termination message made
// safe for a status) and the leader's write fence (FencedKubeClient, LeaderElector::CheckFence)
// against an in-memory Lease with resourceVersion compare-and-swap.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "controller/machinery/fenced_kube_client.h"
#include "controller/machinery/leader_elector.h"
#include "controller/reconcile/pod_failure.h"

namespace ccltune::controller {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

Json FailedPod(const Json& container_status) {
  return {{"metadata", {{"name", "j-a0-0"}}},
          {"status", {{"phase", "Failed"}, {"containerStatuses", {container_status}}}}};
}

TEST(PodFailure, CarriesTheRanksOwnLineAfterExitCodeAndReason) {
  Json cs = {{"state",
              {{"terminated",
                {{"exitCode", 1},
                 {"reason", "Error"},
                 {"message",
                  "error: lost the Redis cache at redis://10.0.0.5:6379/0 while "
                  "publishing: connection refused\n"}}}}}};
  EXPECT_EQ(PodFailureMessage(FailedPod(cs)),
            "pod j-a0-0 failed: exit code 1 (Error): error: lost the Redis cache at "
            "redis://10.0.0.5:6379/0 while publishing: connection refused");
}

TEST(PodFailure, ReadsLastStateWhenTheContainerRestarted) {
  Json cs = {{"state", {{"waiting", {{"reason", "CrashLoopBackOff"}}}}},
             {"lastState", {{"terminated", {{"exitCode", 2}, {"message", "bad plan"}}}}}};
  EXPECT_EQ(PodFailureMessage(FailedPod(cs)), "pod j-a0-0 failed: exit code 2: bad plan");
}

TEST(PodFailure, FromALogTailTakesTheLastErrorLine) {
  EXPECT_EQ(TerminationLine("starting\nerror: first\nerror: the cause\nbye\n\n"),
            "error: the cause");
  EXPECT_EQ(TerminationLine("starting\nlast words\n"), "last words");
  EXPECT_EQ(TerminationLine(" \n\n"), "");
}

TEST(PodFailure, StripsControlsAndEscapesAndMasksUrlPasswords) {
  EXPECT_EQ(TerminationLine("\x1b[31merror:\x1b[0m\tbad\x07 thing\r"), "error: bad thing");
  EXPECT_EQ(RedactUrlCredentials("at redis://user:s3cret@host:6379/0 and rediss://tok@h/1"),
            "at redis://user:***@host:6379/0 and rediss://***@h/1");
  EXPECT_EQ(RedactUrlCredentials("redis://host:6379/0 mail a@b"), "redis://host:6379/0 mail a@b");
  EXPECT_EQ(TerminationLine("error: redis://:pw@h:1/0"), "error: redis://:***@h:1/0");
}

TEST(PodFailure, BoundsTheLineOnAUtf8Boundary) {
  std::string long_line = "error: " + std::string(2000, 'x') + "\xc3\xa9";
  std::string line = TerminationLine(long_line);
  EXPECT_EQ(line.size(), kTerminationLineMaxBytes);
  EXPECT_EQ(line.substr(line.size() - 3), "...");
  std::string accents;
  for (int i = 0; i < 600; ++i) accents += "\xc3\xa9";  // 1200 bytes of two-byte characters
  line = TerminationLine(accents);
  EXPECT_LE(line.size(), kTerminationLineMaxBytes);
  EXPECT_EQ(line.substr(line.size() - 5), "\xc3\xa9...") << "never half a character";
}

// An in-memory API server holding one Lease; Update is a compare-and-swap on resourceVersion.
class FakeLeaseServer : public KubeClient {
 public:
  core::Result<Json> Get(const std::string& path) override {
    std::lock_guard<std::mutex> l(mu_);
    ++reads;
    if (down) return core::Unavailable("down");
    if (lease_.is_null()) return core::NotFound(path);
    return lease_;
  }
  core::Result<Json> Create(const std::string&, const Json& body) override {
    std::lock_guard<std::mutex> l(mu_);
    ++writes;
    if (down) return core::Unavailable("down");
    lease_ = body;
    lease_["metadata"]["resourceVersion"] = std::to_string(++rv_);
    return lease_;
  }
  core::Result<Json> Update(const std::string& path, const Json& body) override {
    std::lock_guard<std::mutex> l(mu_);
    ++writes;
    if (down) return core::Unavailable("down");
    if (body["metadata"].value("resourceVersion", "") != lease_["metadata"]["resourceVersion"])
      return core::Aborted("conflict on " + path);
    lease_ = body;
    lease_["metadata"]["resourceVersion"] = std::to_string(++rv_);
    return lease_;
  }
  core::Result<Json> MergePatch(const std::string&, const Json&) override {
    ++writes;
    return Json::object();
  }
  core::Status Delete(const std::string&) override {
    ++writes;
    return core::Status::Ok();
  }
  core::Status Watch(const std::string&, int, const std::function<bool(const Json&)>&) override {
    return core::Status::Ok();
  }
  std::atomic<bool> down{false};
  std::atomic<int> reads{0}, writes{0};

 private:
  std::mutex mu_;
  Json lease_;
  long long rv_ = 0;
};

TEST(FencedKubeClient, RefusesWritesButNotReadsWhileTheFenceIsClosed) {
  FakeLeaseServer inner;
  std::atomic<bool> open{false};
  FencedKubeClient client(inner, [&] {
    return open ? core::Status::Ok() : core::Unavailable("fenced: lease overdue");
  });
  (void)client.Get("/x");
  auto created = client.Create("/api/v1/namespaces/d/pods", Json::object());
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().message(), "create /api/v1/namespaces/d/pods: fenced: lease overdue");
  EXPECT_FALSE(client.Update("/p", Json::object()).ok());
  EXPECT_FALSE(client.MergePatch("/p", Json::object()).ok());
  EXPECT_FALSE(client.Delete("/p").ok());
  EXPECT_EQ((inner.reads.load()), 1);
  EXPECT_EQ((inner.writes.load()), 0) << "no write reached the server";
  open = true;
  EXPECT_TRUE(client.Delete("/p").ok());
  EXPECT_EQ((inner.writes.load()), 1);
}

LeaderElectionConfig FastConfig() {
  LeaderElectionConfig c;
  c.ns = "default";
  c.identity = "me";
  c.lease_duration = 2s;
  c.renew_deadline = 600ms;
  c.retry_period = 100ms;
  return c;
}

template <class Pred>
bool WaitFor(Pred p, std::chrono::milliseconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (p()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return p();
}

// A frozen elector (its thread stopped, as under SIGSTOP) still believes it leads, but the
// fence closes renew_deadline after its last renewal, whatever the elector's thread does.
TEST(LeaderElector, FenceClosesOnTheClockEvenWhenTheElectorDoesNotRun) {
  FakeLeaseServer server;
  LeaderElector elector(server, FastConfig(), nullptr);
  std::atomic<bool> stop{false};
  std::thread t([&] { elector.Run(stop); });
  ASSERT_TRUE(WaitFor([&] { return elector.is_leader(); }, 3s));
  EXPECT_TRUE(elector.CheckFence().ok());
  stop = true;  // the elector stops renewing, and never steps down by itself
  t.join();
  EXPECT_TRUE(elector.is_leader());
  ASSERT_TRUE(WaitFor([&] { return !elector.CheckFence().ok(); }, 2s));
  core::Status s = elector.CheckFence();
  EXPECT_NE(s.message().find("fenced: me last renewed its Lease"), std::string::npos)
      << s.message();
  // Resumed: the fence opens again only after a successful compare-and-swap renewal.
  stop = false;
  server.down = true;
  std::thread again([&] { elector.Run(stop); });
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(elector.CheckFence().ok()) << "no renewal, no write";
  server.down = false;
  EXPECT_TRUE(WaitFor([&] { return elector.CheckFence().ok(); }, 2s));
  stop = true;
  again.join();
}

TEST(LeaderElector, ConfigOrderIsCheckedNamingTheFlags) {
  LeaderElectionConfig c = FastConfig();
  EXPECT_TRUE(CheckLeaderElectionConfig(c).ok());
  c.renew_deadline = 2s;  // not below the lease duration
  core::Status s = CheckLeaderElectionConfig(c);
  EXPECT_EQ(s.code(), core::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--leader-elect-renew-deadline"), std::string::npos);
}

}  // namespace
}  // namespace ccltune::controller

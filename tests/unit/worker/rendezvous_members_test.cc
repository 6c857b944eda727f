// Rendezvous::AllGatherAmong on a real redis-server: the ranks of one node exchange among
// themselves while the other node's ranks never take part (the hierarchical all-reduce's node
// teams, core/peers/team_directory.h), and a member outside the job is refused at once.
#include <gtest/gtest.h>

#include <thread>

#include "core/redis/redis_client.h"
#include "tests/support/redis_test.h"
#include "worker/rendezvous/rendezvous.h"

namespace ccltune::worker {
namespace {

// Each rank thread connects a client of its own (RedisTest::Connect).
class RendezvousMembersTest : public ccltune::testing::RedisTest {
 protected:
  NeverCancel cancel_;
};

TEST_F(RendezvousMembersTest, MembersExchangeWithoutTheRestOfTheJob) {
  std::vector<std::vector<std::string>> got(4);
  std::vector<std::thread> ranks;
  for (int r : {1, 3}) {  // the job has 4 ranks; ranks 0 and 2 never call
    ranks.emplace_back([&, r] {
      auto redis = Connect();
      ASSERT_NE(redis, nullptr);
      Rendezvous rv(*redis, core::JobKeys("members", 1), r, 4, cancel_);
      auto all = rv.AllGatherAmong("node-team:x", "v" + std::to_string(r), {1, 3}, DeadlineIn(10));
      ASSERT_TRUE(all.ok()) << all.status().ToString();
      got[r] = *all;
    });
  }
  for (auto& t : ranks) t.join();
  EXPECT_EQ(got[1], (std::vector<std::string>{"v1", "v3"}));
  EXPECT_EQ(got[3], got[1]);
}

TEST_F(RendezvousMembersTest, AMissingMemberTimesOutNamingIt) {
  auto redis = Connect();
  ASSERT_NE(redis, nullptr);
  Rendezvous rv(*redis, core::JobKeys("members", 2), 0, 4, cancel_);
  auto all = rv.AllGatherAmong("x", "v", {0, 2}, DeadlineIn(0.3));
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.status().code(), core::StatusCode::kTimeout) << all.status().ToString();
  EXPECT_NE(all.status().message().find("no value from ranks 2"), std::string::npos)
      << all.status().message();
  auto outside = rv.AllGatherAmong("y", "v", {0, 4}, DeadlineIn(10));
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("member rank 4 outside the job's 4 ranks"),
            std::string::npos)
      << outside.status().message();
}

}  // namespace
}  // namespace ccltune::worker

// TeamDirectory (core/peers/team_directory.h): the ranks of each node exchange among themselves
// over the job's directory, all nodes at once, none seeing another node's values; and
// PlaceOfRank (core/node/node_name.h), which gives each rank its team.
#include "core/peers/team_directory.h"

#include <gtest/gtest.h>

#include <thread>

#include "core/node/node_name.h"
#include "tests/unit/worker/thread_peer_directory.h"

namespace ccltune::core {
namespace {

using worker::testing::ThreadPeerDirectory;
using worker::testing::ThreadPeerExchange;

TEST(PlaceOfRank, NodesByLowestRankAndLocalRanksInRankOrder) {
  const std::vector<std::string> names = {"b", "a", "b", "a", "c", "c"};
  const RankPlace p0 = PlaceOfRank(names, 0);
  EXPECT_EQ(p0.node, 0);
  EXPECT_EQ(p0.local_rank, 0);
  EXPECT_EQ(p0.node_ranks, (std::vector<int>{0, 2}));
  const RankPlace p2 = PlaceOfRank(names, 2);
  EXPECT_EQ(p2.node, 0);  // "b"'s index, though "a" was seen last
  EXPECT_EQ(p2.local_rank, 1);
  const RankPlace p3 = PlaceOfRank(names, 3);
  EXPECT_EQ(p3.node, 1);  // "a" first appears at rank 1, after "b"
  EXPECT_EQ(p3.local_rank, 1);
  EXPECT_EQ(p3.node_ranks, (std::vector<int>{1, 3}));
  const RankPlace p5 = PlaceOfRank(names, 5);
  EXPECT_EQ(p5.node, 2);
  EXPECT_EQ(p5.local_rank, 1);
}

TEST(PlaceOfRank, EmulatedSplitGivesConsecutiveTeams) {
  std::vector<std::string> names;
  for (int r = 0; r < 4; ++r) names.push_back(EmulatedNodeName("box", r, 4, 2));
  for (int r = 0; r < 4; ++r) {
    const RankPlace p = PlaceOfRank(names, r);
    EXPECT_EQ(p.node, r / 2);
    EXPECT_EQ(p.local_rank, r % 2);
    EXPECT_EQ(p.node_ranks, (std::vector<int>{r / 2 * 2, r / 2 * 2 + 1}));
  }
}

// 4 ranks as threads, nodes {0, 2} and {1, 3}: every exchange keeps to the rank's node.
TEST(TeamDirectory, EachNodeSeesOnlyItsOwnRanks) {
  const std::vector<std::string> names = {"n0", "n1", "n0", "n1"};
  ThreadPeerExchange exchange(4);
  std::vector<std::vector<std::string>> gathered(4);
  std::vector<std::string> broadcast(4);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back([&, r] {
      ThreadPeerDirectory job(exchange, r);
      const RankPlace place = PlaceOfRank(names, r);
      TeamDirectory team(job, place.node_ranks, "node-team:");
      auto all = team.AllGather("x", "rank" + std::to_string(r), DeadlineIn(10));
      ASSERT_TRUE(all.ok()) << all.status().ToString();
      gathered[r] = *all;
      const std::optional<std::string> mine =
          place.local_rank == 1 ? std::optional<std::string>("from " + std::to_string(r))
                                : std::nullopt;
      auto b = team.Broadcast("y", /*root=*/1, mine, DeadlineIn(10));
      ASSERT_TRUE(b.ok()) << b.status().ToString();
      broadcast[r] = *b;
    });
  }
  for (auto& t : ranks) t.join();
  EXPECT_EQ(gathered[0], (std::vector<std::string>{"rank0", "rank2"}));
  EXPECT_EQ(gathered[2], gathered[0]);
  EXPECT_EQ(gathered[1], (std::vector<std::string>{"rank1", "rank3"}));
  EXPECT_EQ(gathered[3], gathered[1]);
  EXPECT_EQ(broadcast[0], "from 2");
  EXPECT_EQ(broadcast[2], "from 2");
  EXPECT_EQ(broadcast[1], "from 3");
  EXPECT_EQ(broadcast[3], "from 3");
}

// Over a directory that gathers among members (Redis, here the threads' exchange), a node's
// ranks exchange without the other node taking part at all.
TEST(TeamDirectory, ANodeExchangesWithoutTheOtherNode) {
  ThreadPeerExchange exchange(4);
  std::vector<std::vector<std::string>> gathered(4);
  std::vector<std::thread> ranks;
  for (int r : {1, 3}) {
    ranks.emplace_back([&, r] {
      ThreadPeerDirectory job(exchange, r);
      TeamDirectory team(job, {1, 3}, "node-team:");
      auto all = team.AllGather("x", "rank" + std::to_string(r), DeadlineIn(10));
      ASSERT_TRUE(all.ok()) << all.status().ToString();
      gathered[r] = *all;
    });
  }
  for (auto& t : ranks) t.join();
  EXPECT_EQ(gathered[1], (std::vector<std::string>{"rank1", "rank3"}));
  EXPECT_EQ(gathered[3], gathered[1]);
}

// A directory that only gathers job-wide (PeerDirectory's default AllGatherAmong).
class JobWideOnly final : public PeerDirectory {
 public:
  JobWideOnly(ThreadPeerExchange& ex, int rank) : ex_(ex), rank_(rank) {}
  Result<std::vector<std::string>> AllGather(const std::string& name, const std::string& mine,
                                             Deadline deadline) override {
    return ex_.AllGather(name, rank_, mine, deadline);
  }
  Result<std::string> Broadcast(const std::string&, int, const std::optional<std::string>&,
                                Deadline) override {
    return Internal("not used");
  }

 private:
  ThreadPeerExchange& ex_;
  int rank_;
};

TEST(TeamDirectory, OverAJobWideDirectoryEveryRankTakesPartAndKeepsItsTeam) {
  ThreadPeerExchange exchange(4);
  std::vector<std::vector<std::string>> gathered(4);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back([&, r] {
      JobWideOnly job(exchange, r);
      TeamDirectory team(job, r < 2 ? std::vector<int>{0, 1} : std::vector<int>{2, 3}, "t/");
      auto all = team.AllGather("x", std::to_string(r), DeadlineIn(10));
      ASSERT_TRUE(all.ok()) << all.status().ToString();
      gathered[r] = *all;
    });
  }
  for (auto& t : ranks) t.join();
  EXPECT_EQ(gathered[0], (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(gathered[3], (std::vector<std::string>{"2", "3"}));
}

TEST(TeamDirectory, RootOutsideTheTeamIsRefused) {
  ThreadPeerExchange exchange(1);
  ThreadPeerDirectory job(exchange, 0);
  TeamDirectory team(job, {0}, "t/");
  auto b = team.Broadcast("y", 1, "v", DeadlineIn(1));
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(b.status().message().find("root 1 is not a team rank (0..0)"), std::string::npos)
      << b.status().message();
}

// Every rank learns the same verdict: the first rank whose team had a problem, or none.
TEST(FirstRankProblem, EveryRankLearnsTheFirstRanksProblem) {
  for (const bool any : {false, true}) {
    ThreadPeerExchange exchange(4);
    std::vector<std::string> verdict(4, "unset");
    std::vector<std::thread> ranks;
    for (int r = 0; r < 4; ++r) {
      ranks.emplace_back([&, r] {
        ThreadPeerDirectory job(exchange, r);
        const std::string mine = any && r >= 2 ? "IPC failed on " + std::to_string(r) : "";
        auto got = FirstRankProblem(job, "ok", mine, "node", DeadlineIn(10));
        ASSERT_TRUE(got.ok()) << got.status().ToString();
        verdict[r] = *got;
      });
    }
    for (auto& t : ranks) t.join();
    for (int r = 0; r < 4; ++r) {
      EXPECT_EQ(verdict[r], any ? "rank 2's node: IPC failed on 2" : "") << "rank " << r;
    }
  }
}

}  // namespace
}  // namespace ccltune::core

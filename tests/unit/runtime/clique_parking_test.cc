// The one-process teardown rule (runtime/clique_parking.h): a rank's context waits for no
// peer; the clique is handed back whole, once, to the last rank to arrive, whatever the
// order; cliques do not mix.
#include "runtime/clique_parking.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace ccltune::runtime {
namespace {

struct Ctx {
  explicit Ctx(int r, std::atomic<int>* freed) : rank(r), freed_(freed) {}
  ~Ctx() { freed_->fetch_add(1); }
  int rank;
  std::atomic<int>* freed_;
};

TEST(CliqueParking, SequentialDestroyOfFourRanksFreesNothingUntilTheLast) {
  CliqueParking<Ctx> parking;
  std::atomic<int> freed{0};
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(parking.Park("clique-a", 4, std::make_unique<Ctx>(r, &freed)).empty());
    EXPECT_EQ(parking.Waiting("clique-a"), static_cast<std::size_t>(r + 1));
    EXPECT_EQ(freed.load(), 0) << "rank " << r << "'s memory freed while peers may read it";
  }
  std::vector<std::unique_ptr<Ctx>> all =
      parking.Park("clique-a", 4, std::make_unique<Ctx>(3, &freed));
  ASSERT_EQ(all.size(), 4u);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(all[r]->rank, r);
  EXPECT_EQ(parking.Waiting("clique-a"), 0u);
  all.clear();
  EXPECT_EQ(freed.load(), 4);
}

TEST(CliqueParking, CliquesAreKeptApart) {
  CliqueParking<Ctx> parking;
  std::atomic<int> freed{0};
  EXPECT_TRUE(parking.Park("a", 2, std::make_unique<Ctx>(0, &freed)).empty());
  EXPECT_TRUE(parking.Park("b", 2, std::make_unique<Ctx>(0, &freed)).empty());
  EXPECT_EQ(parking.Park("b", 2, std::make_unique<Ctx>(1, &freed)).size(), 2u);
  EXPECT_EQ(parking.Waiting("a"), 1u);
  EXPECT_EQ(parking.Park("a", 2, std::make_unique<Ctx>(1, &freed)).size(), 2u);
}

TEST(CliqueParking, ThreadsDestroyingConcurrentlyHandTheCliqueToExactlyOne) {
  CliqueParking<Ctx> parking;
  std::atomic<int> freed{0}, handed{0}, holders{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < 8; ++r) {
    threads.emplace_back([&, r] {
      auto got = parking.Park("c", 8, std::make_unique<Ctx>(r, &freed));
      if (!got.empty()) {
        holders.fetch_add(1);
        handed.fetch_add(static_cast<int>(got.size()));
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(holders.load(), 1);
  EXPECT_EQ(handed.load(), 8);
  EXPECT_EQ(freed.load(), 8);
}

}  // namespace
}  // namespace ccltune::runtime

// The buffer exchange of threads of one process (runtime/nccl_shim/buffer_board.h), without
// a GPU: real threads, one per rank, meeting on one board. Every rank must get the same
// answer for every round: every rank's buffers, or none; a round that runs out ends the
// exchanges for every rank at that round, and nothing waits past its deadline.
#include "runtime/nccl_shim/buffer_board.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

namespace ccltune::shim {
namespace {

using std::chrono::milliseconds;

// Rank r's buffers in round k: distinct fake addresses, never dereferenced.
BufferBoard::Post PostOf(int rank, std::uint64_t round, bool reachable = true) {
  const std::uintptr_t base = 0x100000 * (rank + 1) + 0x100 * round;
  return {reinterpret_cast<const void*>(base), reinterpret_cast<void*>(base + 0x80), reachable};
}

core::Deadline In(milliseconds ms) { return core::Clock::now() + ms; }

TEST(BufferBoard, FourThreadsGetEveryRanksBuffersInEveryRound) {
  constexpr int kWorld = 4, kRounds = 200;
  BufferBoard board(kWorld);
  std::vector<int> complete(kWorld, 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < kWorld; ++r) {
    threads.emplace_back([&, r] {
      for (std::uint64_t k = 0; k < kRounds; ++k) {
        const std::optional<RankBuffers> got =
            board.Exchange(r, k, PostOf(r, k), In(milliseconds(5000)));
        if (!got) continue;
        bool same = true;
        for (int p = 0; p < kWorld; ++p) {
          same &= got->send[p] == PostOf(p, k).send && got->recv[p] == PostOf(p, k).recv;
        }
        complete[r] += same;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < kWorld; ++r) EXPECT_EQ(complete[r], kRounds) << "rank " << r;
  EXPECT_FALSE(board.Ended());
}

TEST(BufferBoard, OneUnreachableBufferMeansNoBuffersForAnyRank) {
  constexpr int kWorld = 3;
  BufferBoard board(kWorld);
  std::vector<int> answered(kWorld, -1);
  std::vector<std::thread> threads;
  for (int r = 0; r < kWorld; ++r) {
    threads.emplace_back([&, r] {
      answered[r] = board.Exchange(r, 0, PostOf(r, 0, /*reachable=*/r != 1), In(milliseconds(5000)))
                        .has_value();
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(answered, std::vector<int>({0, 0, 0}));
  EXPECT_FALSE(board.Ended());  // a full round with an unreachable buffer ends nothing
}

TEST(BufferBoard, ARankThatDoesNotComeEndsTheExchangesAtThatRoundForEveryone) {
  constexpr int kWorld = 2;
  BufferBoard board(kWorld);
  // Round 0 completes; in round 1 rank 1 is late past rank 0's deadline.
  std::thread late(
      [&] { EXPECT_TRUE(board.Exchange(1, 0, PostOf(1, 0), In(milliseconds(5000)))); });
  EXPECT_TRUE(board.Exchange(0, 0, PostOf(0, 0), In(milliseconds(5000))));
  late.join();
  const auto before = core::Clock::now();
  EXPECT_FALSE(board.Exchange(0, 1, PostOf(0, 1), In(milliseconds(100))));
  EXPECT_LT(core::Clock::now() - before, milliseconds(3000));  // bounded, not hung
  EXPECT_TRUE(board.Ended());
  // The late rank reads the same answer for round 1, and every later round is none at once,
  // even when both ranks come.
  EXPECT_FALSE(board.Exchange(1, 1, PostOf(1, 1), In(milliseconds(5000))));
  std::thread both(
      [&] { EXPECT_FALSE(board.Exchange(1, 2, PostOf(1, 2), In(milliseconds(5000)))); });
  EXPECT_FALSE(board.Exchange(0, 2, PostOf(0, 2), In(milliseconds(5000))));
  both.join();
}

TEST(BufferBoard, BoardsAreSharedPerCliqueAndForgottenWithTheirRanks) {
  std::shared_ptr<BufferBoard> a = BufferBoard::For("clique-a", 2);
  EXPECT_EQ(a, BufferBoard::For("clique-a", 2));
  EXPECT_NE(a, BufferBoard::For("clique-b", 2));
  std::weak_ptr<BufferBoard> gone = a;
  a.reset();
  EXPECT_TRUE(gone.expired());
}

}  // namespace
}  // namespace ccltune::shim

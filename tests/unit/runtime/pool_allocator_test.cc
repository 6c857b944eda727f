// The pool's bookkeeping: first fit, aligned, coalescing, and the same offsets for the
// same call sequence (which is what lets every rank find a buffer at one offset).
#include "runtime/pool_allocator.h"

#include <gtest/gtest.h>

namespace ccltune::runtime {
namespace {

constexpr std::size_t kA = PoolAllocator::kAlignment;

TEST(PoolAllocator, FirstFitAlignedAndCoalescing) {
  PoolAllocator p(16 * kA + 100);  // the odd tail is not usable
  EXPECT_EQ(p.capacity(), 16 * kA);
  EXPECT_EQ(p.Allocate(0), std::nullopt);
  const auto a = p.Allocate(1);
  const auto b = p.Allocate(kA + 1);
  const auto c = p.Allocate(4 * kA);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(*a, 0u);
  EXPECT_EQ(*b, kA);
  EXPECT_EQ(*c, 3 * kA);
  EXPECT_EQ(p.used(), 7 * kA);
  EXPECT_TRUE(p.Free(*b));
  EXPECT_FALSE(p.Free(*b));           // not live any more
  EXPECT_FALSE(p.Free(*a + 16));      // not a block start
  EXPECT_EQ(p.Allocate(2 * kA), *b);  // first fit reuses the hole
  EXPECT_TRUE(p.Free(*a));
  EXPECT_TRUE(p.Free(*b));
  EXPECT_TRUE(p.Free(*c));
  EXPECT_EQ(p.used(), 0u);
  EXPECT_EQ(p.Allocate(16 * kA), 0u);  // everything coalesced back into one range
  EXPECT_EQ(p.Allocate(1), std::nullopt);
}

TEST(PoolAllocator, ContainingFindsTheLiveBlock) {
  PoolAllocator p(8 * kA);
  const auto a = p.Allocate(2 * kA);
  ASSERT_TRUE(a);
  EXPECT_EQ(p.Containing(*a + 10, 100), *a);
  EXPECT_EQ(p.Containing(*a + kA, kA), *a);
  EXPECT_EQ(p.Containing(*a + kA, kA + 1), std::nullopt);  // runs past the block
  EXPECT_EQ(p.Containing(3 * kA, 1), std::nullopt);        // free range
}

TEST(PoolAllocator, SameSequenceSameOffsets) {
  PoolAllocator r0(64 * kA), r1(64 * kA);
  for (std::size_t n : {100u, 9000u, 5u, 70000u}) {
    const auto x = r0.Allocate(n);
    EXPECT_EQ(x, r1.Allocate(n));
    if (n == 9000u) {
      EXPECT_TRUE(r0.Free(*x));
      EXPECT_TRUE(r1.Free(*x));
    }
  }
}

}  // namespace
}  // namespace ccltune::runtime

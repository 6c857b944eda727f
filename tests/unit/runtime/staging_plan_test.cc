// Where the runtime's launches find their staging (runtime/staging_plan.h): a signature's own
// partition, carved once and zeroed then; the partition every pull launch shares, grown in
// place while it is the last one and carved anew past the others otherwise; the area's and the
// signature count's bounds; offsets on 256-byte boundaries.
#include "runtime/staging_plan.h"

#include <gtest/gtest.h>

namespace ccltune::runtime {
namespace {

constexpr std::size_t kKiB = 1024;

TEST(StagingPlanTest, ASignatureKeepsItsOwnPartitionZeroedOnlyWhenCarved) {
  StagingPlan plan(64 * kKiB, 16);
  const auto a = plan.Own("push|a", 1000);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->at, 0u);
  EXPECT_TRUE(a->fresh);
  const auto b = plan.Own("push|b", 10);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->at, 1024u);  // 1000 rounded up to 256 bytes
  EXPECT_TRUE(b->fresh);
  const auto again = plan.Own("push|a", 1000);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->at, 0u);
  EXPECT_FALSE(again->fresh);
  EXPECT_EQ(plan.used(), 1280u);
  EXPECT_EQ(plan.signatures(), 2u);
}

TEST(StagingPlanTest, PullLaunchesOfEveryShapeShareOnePartition) {
  StagingPlan plan(64 * kKiB, 16);
  const auto first = plan.Shared(8 * kKiB);   // a reduce-scatter's input and output, say
  const auto second = plan.Shared(4 * kKiB);  // an all-gather's, smaller
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->at, 0u);
  EXPECT_EQ(second->at, 0u);
  EXPECT_FALSE(first->fresh);  // pull launches read only what they wrote: nothing to zero
  EXPECT_EQ(plan.used(), 8 * kKiB);
  EXPECT_EQ(plan.signatures(), 0u);
}

TEST(StagingPlanTest, TheSharedPartitionGrowsInPlaceWhileItIsTheLast) {
  StagingPlan plan(64 * kKiB, 16);
  ASSERT_TRUE(plan.Own("push|a", 2 * kKiB));
  const auto small = plan.Shared(4 * kKiB);
  const auto large = plan.Shared(12 * kKiB);
  ASSERT_TRUE(small && large);
  EXPECT_EQ(small->at, 2 * kKiB);
  EXPECT_EQ(large->at, 2 * kKiB);
  EXPECT_EQ(plan.used(), 14 * kKiB);
}

TEST(StagingPlanTest, TheSharedPartitionMovesPastOthersToGrow) {
  StagingPlan plan(64 * kKiB, 16);
  ASSERT_TRUE(plan.Shared(4 * kKiB));
  ASSERT_TRUE(plan.Own("push|a", 2 * kKiB));  // carved after it
  const auto grown = plan.Shared(8 * kKiB);
  ASSERT_TRUE(grown.has_value());
  EXPECT_EQ(grown->at, 6 * kKiB);  // the old 4 KiB stay where captured graphs may use them
  EXPECT_EQ(plan.used(), 14 * kKiB);
  const auto small = plan.Shared(1 * kKiB);
  ASSERT_TRUE(small.has_value());
  EXPECT_EQ(small->at, 6 * kKiB);
}

TEST(StagingPlanTest, WhatDoesNotFitGetsNoPartitionAndTakesNothing) {
  StagingPlan plan(16 * kKiB, 2);
  ASSERT_TRUE(plan.Own("push|a", 10 * kKiB));
  EXPECT_FALSE(plan.Own("push|b", 8 * kKiB).has_value());
  EXPECT_FALSE(plan.Shared(8 * kKiB).has_value());
  EXPECT_EQ(plan.used(), 10 * kKiB);
  const auto fits = plan.Shared(6 * kKiB);
  ASSERT_TRUE(fits.has_value());
  EXPECT_EQ(fits->at, 10 * kKiB);
  // The last partition may grow only to the area's end.
  EXPECT_FALSE(plan.Shared(7 * kKiB).has_value());
  EXPECT_EQ(plan.used(), 16 * kKiB);
  EXPECT_TRUE(plan.Shared(6 * kKiB).has_value());  // the one it has still serves
}

TEST(StagingPlanTest, TheSignatureCountIsBounded) {
  StagingPlan plan(64 * kKiB, 2);
  ASSERT_TRUE(plan.Own("a", 256));
  ASSERT_TRUE(plan.Own("b", 256));
  EXPECT_FALSE(plan.Own("c", 256).has_value());
  EXPECT_TRUE(plan.Own("a", 256).has_value());  // the ones it has still serve
  EXPECT_TRUE(plan.Shared(256).has_value());    // the shared one is not a signature's
}

}  // namespace
}  // namespace ccltune::runtime

// The adaptive search's pruning rule on synthetic timings (issue 25): it keeps every choice
// whose rounds overlap the best's within the noise threshold, never drops the true winner
// under noise the threshold covers, and drops clear losers after screening.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/plan/search_mode.h"
#include "core/search/screening.h"

namespace ccltune::core {
namespace {

constexpr double kNoise = 3;  // noiseThresholdPercent, the plan's default

// `n` rounds of a choice whose true time is `us`, each scaled by a factor drawn from [lo, hi].
std::vector<double> Rounds(std::mt19937_64& rng, double us, int n, double lo, double hi) {
  std::uniform_real_distribution<double> factor(lo, hi);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(us * factor(rng));
  return out;
}

Reference Full(const std::string& name, const std::vector<double>& rounds) {
  return {name, *std::max_element(rounds.begin(), rounds.end())};
}

TEST(PruningRule, KeepsEveryChoiceWhoseRoundsOverlapTheBestWithinNoise) {
  std::mt19937_64 rng(25);
  std::uniform_real_distribution<double> base(1, 1e5);
  for (int trial = 0; trial < 20000; ++trial) {
    const double best_us = base(rng);
    const auto best = Rounds(rng, best_us, 5, 0.8, 1.5);  // a spread far wider than noise
    const Reference ref = Full("best", best);
    // One screening round anywhere up to (1 + noise) x the best's slowest round; the others
    // arbitrarily slow: the choice overlaps the best's spread widened by the threshold.
    auto screening = Rounds(rng, best_us, 2, 1.0, 50.0);
    std::uniform_real_distribution<double> inside(0.1 * ref.max_us,
                                                  (1 + kNoise / 100) * ref.max_us);
    screening[trial % 2] = inside(rng);
    const auto verdict = JudgeScreening(screening, {ref}, kNoise);
    ASSERT_FALSE(verdict.drop) << "trial " << trial << ": " << verdict.reason;
  }
}

// Noise that only slows a round down (another process takes the core), by up to the
// threshold: a choice at least as fast as the best reference is never dropped.
TEST(PruningRule, NeverDropsTheTrueWinnerUnderOneSidedNoise) {
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<double> base(1, 1e5), lead(0.5, 1.0);
  for (int trial = 0; trial < 20000; ++trial) {
    const double ref_us = base(rng);
    const double winner_us = ref_us * (trial % 4 == 0 ? 1.0 : lead(rng));  // ties included
    const auto full = Rounds(rng, ref_us, 5, 1.0, 1 + kNoise / 100);
    const auto screening = Rounds(rng, winner_us, ScreeningRounds(5), 1.0, 1 + kNoise / 100);
    const auto verdict = JudgeScreening(screening, {Full("default", full)}, kNoise);
    ASSERT_FALSE(verdict.drop) << "trial " << trial << ": " << verdict.reason;
  }
}

// Noise both ways by up to ±h with (1+h)/(1-h) <= 1 + threshold, i.e. h <= t/(2+t): the same.
TEST(PruningRule, NeverDropsTheTrueWinnerUnderTwoSidedNoise) {
  std::mt19937_64 rng(3);
  const double t = kNoise / 100, h = t / (2 + t);
  std::uniform_real_distribution<double> base(1, 1e5), lead(0.7, 1.0);
  for (int trial = 0; trial < 20000; ++trial) {
    const double ref_us = base(rng);
    const double winner_us = ref_us * (trial % 4 == 0 ? 1.0 : lead(rng));
    const auto full = Rounds(rng, ref_us, 5, 1 - h, 1 + h);
    const auto screening = Rounds(rng, winner_us, 2, 1 - h, 1 + h);
    const auto verdict = JudgeScreening(screening, {Full("default", full)}, kNoise);
    ASSERT_FALSE(verdict.drop) << "trial " << trial << ": " << verdict.reason;
  }
}

TEST(PruningRule, DropsClearLosersAfterScreening) {
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> base(1, 1e5);
  int dropped = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    const double ref_us = base(rng);
    // The loser is 10 % to 10x slower; both see the same ±1 % noise.
    const double loser_us = ref_us * (1.1 + 9 * (trial / 1000.0));
    const auto full = Rounds(rng, ref_us, 5, 0.99, 1.01);
    const auto screening = Rounds(rng, loser_us, 2, 0.99, 1.01);
    dropped += JudgeScreening(screening, {Full("ring", full)}, kNoise).drop;
  }
  EXPECT_EQ(dropped, 1000);
}

TEST(PruningRule, ReasonNamesTheEvidence) {
  const auto verdict =
      JudgeScreening({250.0, 240.0}, {{"ring", 300}, {"recursive-doubling", 110}}, kNoise);
  ASSERT_TRUE(verdict.drop);
  EXPECT_EQ(verdict.reason,
            "screening: fastest of 2 rounds 240.00 us > 1.03 x 110.00 us, the slowest round of "
            "recursive-doubling");
}

TEST(PruningRule, BoundaryIsKept) {
  // Exactly (1 + noise) x the reference's slowest round is not "slower by more than" it.
  EXPECT_FALSE(JudgeScreening({103.0, 200.0}, {{"ring", 100}}, kNoise).drop);
  EXPECT_TRUE(JudgeScreening({103.01, 200.0}, {{"ring", 100}}, kNoise).drop);
  EXPECT_TRUE(JudgeScreening({100.01}, {{"ring", 100}}, 0).drop);
}

TEST(PruningRule, NoEvidenceDropsNothing) {
  EXPECT_FALSE(JudgeScreening({1e9}, {}, kNoise).drop);  // no reference yet
  EXPECT_FALSE(JudgeScreening({}, {{"ring", 1}}, kNoise).drop);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(JudgeScreening({1e9}, {{"ring", inf}}, kNoise).drop);
  EXPECT_FALSE(JudgeScreening({1e9, std::nan("")}, {{"ring", 1}}, kNoise).drop);
  EXPECT_FALSE(JudgeScreening({1e9, inf}, {{"ring", 1}}, kNoise).drop);
}

// Issue 43: at 256 KiB-4 MiB the pull kernels (pooled buffers only) won by far and screening
// dropped every one-shot LL/push kernel against them, so a program's own buffers had no
// measured choice but NCCL. A choice that runs on any buffer is judged by such references only.
TEST(PruningRule, APooledOnlyReferenceNeverDropsAnAnyBufferChoice) {
  const std::vector<Reference> refs = {{"nccl", 100, BufferReach::kAny},
                                       {"oneshot:mode=pull", 20, BufferReach::kPooled},
                                       {"nccl:ctas=8", 90, BufferReach::kAny}};
  const std::vector<double> ll = {50, 52};  // 2.5x the pull winner, 1.8x faster than nccl
  const auto as_pooled = JudgeScreening(ll, refs, kNoise, BufferReach::kPooled);
  ASSERT_TRUE(as_pooled.drop);
  EXPECT_NE(as_pooled.reason.find("oneshot:mode=pull"), std::string::npos) << as_pooled.reason;
  EXPECT_FALSE(JudgeScreening(ll, refs, kNoise, BufferReach::kAny).drop);
  // The default's default: references run on any buffer unless they say otherwise.
  EXPECT_EQ(Reference{}.reach, BufferReach::kAny);
  EXPECT_TRUE(JudgeScreening(ll, refs, kNoise).drop);

  // Slower than the best any-buffer reference: dropped, and the reason names that one.
  const auto slow = JudgeScreening({95, 96}, refs, kNoise, BufferReach::kAny);
  ASSERT_TRUE(slow.drop);
  EXPECT_EQ(slow.reason,
            "screening: fastest of 2 rounds 95.00 us > 1.03 x 90.00 us, the slowest round of "
            "nccl:ctas=8");
  // Only pooled references so far: no evidence against an any-buffer choice.
  EXPECT_FALSE(JudgeScreening({1e6}, {{"oneshot:mode=pull", 20, BufferReach::kPooled}}, kNoise,
                              BufferReach::kAny)
                   .drop);
}

// Eager tunes: an any-buffer choice dearer to issue than the default serves no program's own
// buffers (the host rule), so it must not prune one that may; 4x H200's 2 MiB: the staged
// two-shot (GPU 26.08 us, 13.99 us to issue) would otherwise prune a push one-shot at 26.9 us.
TEST(PruningRule, AChoiceDearerToIssueJudgesNoAnyBufferChoice) {
  const auto any = BufferReach::kAny;
  EXPECT_EQ(ReachAsReference(any, 13.99, 10.01, kNoise), BufferReach::kRegistered);
  EXPECT_EQ(ReachAsReference(any, 10.2, 10.01, kNoise), any);  // within the threshold
  EXPECT_EQ(ReachAsReference(any, std::nullopt, 10.01, kNoise), BufferReach::kRegistered);
  EXPECT_EQ(ReachAsReference(any, 13.99, std::nullopt, kNoise), any);  // graph tunes
  EXPECT_EQ(ReachAsReference(BufferReach::kPooled, 13.99, 10.01, kNoise), BufferReach::kPooled);
  const std::vector<Reference> refs = {
      {"nccl", 31.5, any},
      {"twoshot:mode=pull,staged=1", 26.5, ReachAsReference(any, 13.99, 10.01, kNoise)}};
  EXPECT_FALSE(JudgeScreening({28.2, 28.4}, refs, kNoise, any).drop);
  EXPECT_TRUE(JudgeScreening({33.0, 33.5}, refs, kNoise, any).drop);  // slower than nccl
  EXPECT_TRUE(JudgeScreening({28.2, 28.4}, refs, kNoise, BufferReach::kPooled).drop);
}

// Direct mode runs the pull kernels on a program's registered tensors in graphs: a push
// winner (pooled only) must not prune them, while an any-buffer choice still judges them.
TEST(PruningRule, RegisteredChoicesAreJudgedByRegisteredOrAnyBufferReferences) {
  const std::vector<Reference> push = {{"nccl", 100, BufferReach::kAny},
                                       {"twoshot:mode=push", 40, BufferReach::kPooled}};
  const std::vector<double> pull = {46, 47};
  EXPECT_TRUE(JudgeScreening(pull, push, kNoise, BufferReach::kPooled).drop);
  EXPECT_FALSE(JudgeScreening(pull, push, kNoise, BufferReach::kRegistered).drop);
  std::vector<Reference> with_pull = push;
  with_pull.push_back({"twoshot:mode=pull", 30, BufferReach::kRegistered});
  const auto slower = JudgeScreening(pull, with_pull, kNoise, BufferReach::kRegistered);
  ASSERT_TRUE(slower.drop);
  EXPECT_NE(slower.reason.find("twoshot:mode=pull"), std::string::npos) << slower.reason;
  // A registered winner never judges an any-buffer choice.
  EXPECT_FALSE(JudgeScreening({50, 51}, with_pull, kNoise, BufferReach::kAny).drop);
}

// The fastest any-buffer choice is never dropped, whatever pooled choices measured before it
// and under the same noise the rule tolerates for the winner.
TEST(PruningRule, TheFastestAnyBufferChoiceSurvivesAnyPooledWinner) {
  std::mt19937_64 rng(43);
  std::uniform_real_distribution<double> base(1, 1e5), lead(0.5, 1.0), pooled(0.01, 1.0);
  for (int trial = 0; trial < 20000; ++trial) {
    const double default_us = base(rng);
    const double best_any_us = default_us * (trial % 4 == 0 ? 1.0 : lead(rng));
    std::vector<Reference> refs = {Full("nccl", Rounds(rng, default_us, 5, 1.0, 1.03))};
    for (int k = 0; k < 3; ++k) {
      Reference r =
          Full("pull" + std::to_string(k), Rounds(rng, best_any_us * pooled(rng), 5, 1.0, 1.03));
      r.reach = BufferReach::kPooled;
      refs.push_back(r);
    }
    const auto screening = Rounds(rng, best_any_us, 2, 1.0, 1.03);
    const auto verdict = JudgeScreening(screening, refs, kNoise, BufferReach::kAny);
    ASSERT_FALSE(verdict.drop) << "trial " << trial << ": " << verdict.reason;
  }
}

TEST(PruningRule, ScreeningRoundsLeaveRoundsToFinish) {
  EXPECT_EQ(ScreeningRounds(1), 0);  // nothing left to save: measured in full
  EXPECT_EQ(ScreeningRounds(2), 1);
  EXPECT_EQ(ScreeningRounds(3), 2);
  EXPECT_EQ(ScreeningRounds(5), 2);
  EXPECT_EQ(ScreeningRounds(1000), 2);
}

// Short rounds only where ops are long enough that a round's fixed cost cannot reorder
// choices, and rounds long enough that one iteration cannot decide one; never when there is
// nothing to screen.
TEST(PruningRule, ShortScreeningRoundsOnlyForLongOps) {
  const ScreeningPlan long_ops = PlanScreening(5, 20, kShortScreeningMinOpUs);
  EXPECT_EQ(long_ops.rounds, 2);
  EXPECT_EQ(long_ops.iters, 5);
  EXPECT_TRUE(long_ops.short_rounds);
  const ScreeningPlan short_ops = PlanScreening(5, 20, kShortScreeningMinOpUs - 1);
  EXPECT_EQ(short_ops.rounds, 2);
  EXPECT_EQ(short_ops.iters, 20);
  EXPECT_FALSE(short_ops.short_rounds);
  EXPECT_FALSE(PlanScreening(5, 20, 0).short_rounds);  // nothing tuned yet in the group
  // A short round keeps kMinShortScreeningIters iterations: the host plan's 10 stay full.
  EXPECT_FALSE(PlanScreening(5, 10, 1e6).short_rounds);
  EXPECT_EQ(PlanScreening(5, 10, 1e6).iters, 10);
  EXPECT_FALSE(PlanScreening(5, 19, 1e6).short_rounds);
  EXPECT_EQ(PlanScreening(5, 100, 1e6).iters, 25);
  const ScreeningPlan one_round = PlanScreening(1, 20, 1e6);
  EXPECT_EQ(one_round.rounds, 0);
  EXPECT_FALSE(one_round.short_rounds);
}

TEST(SearchNames, ParseStrictlyAndNameTheAllowedValues) {
  EXPECT_EQ(*ParseSearch("adaptive"), Search::kAdaptive);
  EXPECT_EQ(*ParseSearch("exhaustive"), Search::kExhaustive);
  EXPECT_STREQ(SearchName(Search::kAdaptive), "adaptive");
  auto bad = ParseSearch("Adaptive");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "'Adaptive' is not a known search (allowed: exhaustive, adaptive)");
}

}  // namespace
}  // namespace ccltune::core

// The winner rule of docs/design.md §2.6: fastest valid choice; the default wins unless beaten by
// more than the noise threshold.
#include <gtest/gtest.h>

#include <limits>

#include "core/results/result.h"

namespace ccltune::core {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

ChoiceResult Choice(const std::string& name, double us, ChoiceStatus st = ChoiceStatus::kOk) {
  ChoiceResult c;
  c.name = name;
  c.time_us = us;
  c.min_us = us;
  c.max_us = us;
  c.busbw_gbs = 1000.0 / us;
  c.status = st;
  return c;
}

ResultRecord Record(std::vector<ChoiceResult> choices) {
  ResultRecord r;
  r.op = Op::kAllReduce;
  r.bytes = 4096;
  r.choices = std::move(choices);
  return r;
}

TEST(PickWinner, FasterBeyondNoiseWins) {
  auto r = Record({Choice("ring", 100), Choice("direct", 90), Choice("rs+ag", 95)});
  ASSERT_TRUE(PickWinner(r, "ring", 3).ok());
  EXPECT_EQ(r.winner, "direct");
  EXPECT_DOUBLE_EQ(r.time_us, 90);
  EXPECT_DOUBLE_EQ(r.default_time_us, 100);
  EXPECT_DOUBLE_EQ(r.speedup_vs_default, 100.0 / 90);
  EXPECT_DOUBLE_EQ(r.busbw_gbs, 1000.0 / 90);
}

TEST(PickWinner, WithinNoiseTheDefaultStays) {
  auto r = Record({Choice("ring", 100), Choice("direct", 97.5)});
  ASSERT_TRUE(PickWinner(r, "ring", 3).ok());
  EXPECT_EQ(r.winner, "ring");
  EXPECT_DOUBLE_EQ(r.speedup_vs_default, 1.0);
  // Exactly at the threshold is not "more than": still the default.
  r = Record({Choice("ring", 100), Choice("direct", 97)});
  ASSERT_TRUE(PickWinner(r, "ring", 3).ok());
  EXPECT_EQ(r.winner, "ring");
  // With threshold 0 any strictly faster choice wins.
  r = Record({Choice("ring", 100), Choice("direct", 99.9)});
  ASSERT_TRUE(PickWinner(r, "ring", 0).ok());
  EXPECT_EQ(r.winner, "direct");
}

TEST(PickWinner, TiesGoToTheDefaultThenToTheEarlierChoice) {
  auto r = Record({Choice("ring", 100), Choice("direct", 100)});
  ASSERT_TRUE(PickWinner(r, "ring", 0).ok());
  EXPECT_EQ(r.winner, "ring");
  r = Record({Choice("ring", 100), Choice("direct", 50), Choice("rs+ag", 50)});
  ASSERT_TRUE(PickWinner(r, "ring", 3).ok());
  EXPECT_EQ(r.winner, "direct");
}

TEST(PickWinner, InvalidChoicesNeverWin) {
  auto r = Record({Choice("ring", 100), Choice("direct", 10, ChoiceStatus::kWrong),
                   Choice("rs+ag", kInf, ChoiceStatus::kTimeout),
                   Choice("pairwise", 5, ChoiceStatus::kSkipped),
                   Choice("x", 1, ChoiceStatus::kFailed), Choice("y", 1, ChoiceStatus::kPruned)});
  ASSERT_TRUE(PickWinner(r, "ring", 3).ok());
  EXPECT_EQ(r.winner, "ring");
}

TEST(PickWinner, DefaultFailedFastestValidWinsWithUnknownSpeedup) {
  auto r = Record(
      {Choice("ring", kInf, ChoiceStatus::kTimeout), Choice("direct", 80), Choice("rs+ag", 70)});
  ASSERT_TRUE(PickWinner(r, "ring", 3).ok());
  EXPECT_EQ(r.winner, "rs+ag");
  EXPECT_DOUBLE_EQ(r.speedup_vs_default, 0);
  EXPECT_DOUBLE_EQ(r.default_time_us, 0);
  // A default that was never measured is treated the same way.
  r = Record({Choice("direct", 80)});
  ASSERT_TRUE(PickWinner(r, "ring", 3).ok());
  EXPECT_EQ(r.winner, "direct");
  EXPECT_DOUBLE_EQ(r.speedup_vs_default, 0);
}

TEST(PickWinner, NothingValidIsAnErrorListingWhy) {
  auto timeout = Choice("ring", kInf, ChoiceStatus::kTimeout);
  timeout.reason = "no progress in 30 s";
  auto r = Record({timeout, Choice("direct", 10, ChoiceStatus::kWrong)});
  Status s = PickWinner(r, "ring", 3);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("allReduce:fp32:sum:4096"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("ring timeout (no progress in 30 s)"), std::string::npos);
  EXPECT_NE(s.message().find("direct wrong"), std::string::npos);
  auto empty = Record({});
  EXPECT_FALSE(PickWinner(empty, "ring", 3).ok());
}

// Issue 43's rule: the fastest choice a program's own buffers run, kept beside the winner.
// Here the names that start with "pull" stand for choices that need pooled buffers.
bool AnyBuffer(const std::string& name) { return name.rfind("pull", 0) != 0; }

// PickWinner, then PickAnyBuffer, as the bench runner calls them: "choice time speedup".
std::string Picked(ResultRecord& r) {
  EXPECT_TRUE(PickWinner(r, "nccl", 3).ok());
  PickAnyBuffer(r, "nccl", 3, AnyBuffer);
  if (!r.any_buffer) return "none";
  return r.any_buffer->choice + " " + std::to_string(r.any_buffer->time_us) + " " +
         std::to_string(r.any_buffer->speedup_vs_default);
}

TEST(PickAnyBuffer, AnAnyBufferWinnerIsItsOwnAnyBufferChoice) {
  auto r = Record({Choice("nccl", 100), Choice("pull", 95), Choice("ll", 50)});
  EXPECT_EQ(Picked(r), "ll 50.000000 2.000000");
  EXPECT_EQ(r.winner, "ll");
}

TEST(PickAnyBuffer, APooledWinnerKeepsTheFastestAnyBufferChoiceBesideIt) {
  auto r = Record({Choice("nccl", 100), Choice("push", 60), Choice("pull", 20), Choice("ll", 40),
                   Choice("ll128", 30, ChoiceStatus::kWrong),
                   Choice("simple", kInf, ChoiceStatus::kPruned)});
  // Not the wrong ll128, not the pruned one; the winner is left as it was.
  EXPECT_EQ(Picked(r), "ll 40.000000 2.500000");
  EXPECT_EQ(r.winner, "pull");
}

TEST(PickAnyBuffer, TheDefaultStaysUnlessBeatenBeyondNoise) {
  auto r = Record({Choice("nccl", 100), Choice("pull", 20), Choice("ll", 98)});
  EXPECT_EQ(Picked(r), "nccl 100.000000 1.000000");
}

TEST(PickAnyBuffer, NoValidAnyBufferChoiceLeavesItEmpty) {
  auto r = Record({Choice("nccl", kInf, ChoiceStatus::kTimeout), Choice("pull", 20),
                   Choice("ll", kInf, ChoiceStatus::kFailed)});
  r.any_buffer = AnyBufferChoice{"stale", 1, 1};
  EXPECT_EQ(Picked(r), "none");
  // Without a valid default the speedup is unknown (0), as the winner's.
  r.choices[2] = Choice("ll", 40);
  EXPECT_EQ(Picked(r), "ll 40.000000 0.000000");
}

// Eager tunes measure the host's cost to issue each choice a program's own buffers run: a
// host-bound program pays it, so a choice dearer to issue than NCCL's own (beyond the noise
// threshold) never serves them, however fast on the GPU.
ChoiceResult Hosted(const std::string& name, double us, double host_us) {
  ChoiceResult c = Choice(name, us);
  c.host_us = host_us;
  return c;
}

TEST(PickAnyBuffer, WhereHostTimesWereMeasuredADearerIssueDisqualifies) {
  // staged: 1.25x on the GPU, 40 % dearer to issue; push: a little slower, cheaper to issue.
  auto r = Record({Hosted("nccl", 100, 10), Hosted("staged", 80, 14), Hosted("push", 85, 9),
                   Choice("pull", 50)});
  EXPECT_EQ(Picked(r), "push 85.000000 1.176471");
  EXPECT_EQ(r.winner, "pull");  // the winner stays the GPU's
  // Within the threshold (3 %) of NCCL's own it qualifies.
  r.choices[1].host_us = 10.2;
  EXPECT_EQ(Picked(r), "staged 80.000000 1.250000");
  // A choice whose host time is missing where the default's was measured does not qualify.
  r.choices[1].host_us.reset();
  EXPECT_EQ(Picked(r), "push 85.000000 1.176471");
  // Nothing cheaper to issue: NCCL's own.
  r.choices[2].host_us = 11;
  EXPECT_EQ(Picked(r), "nccl 100.000000 1.000000");
}

TEST(PickAnyBuffer, AnAnyBufferWinnerDearerToIssueGivesWay) {
  auto r = Record({Hosted("nccl", 100, 10), Hosted("staged", 50, 20), Hosted("ll", 90, 8)});
  EXPECT_EQ(Picked(r), "ll 90.000000 1.111111");
  EXPECT_EQ(r.winner, "staged");
}

TEST(PickAnyBuffer, WithoutTheDefaultsHostTimeTheRuleIsTheGpus) {
  // Graph tunes and the host backend measure no host time: as before.
  auto r = Record({Choice("nccl", 100), Hosted("staged", 80, 50), Choice("pull", 50)});
  EXPECT_EQ(Picked(r), "staged 80.000000 1.250000");
}

TEST(ChoiceStatus, NamesRoundTrip) {
  for (auto s : {ChoiceStatus::kOk, ChoiceStatus::kWrong, ChoiceStatus::kTimeout,
                 ChoiceStatus::kFailed, ChoiceStatus::kSkipped, ChoiceStatus::kPruned}) {
    EXPECT_EQ(*ParseChoiceStatus(ChoiceStatusName(s)), s);
  }
  EXPECT_NE(ParseChoiceStatus("OK").status().message().find("allowed: ok, wrong"),
            std::string::npos);
}

}  // namespace
}  // namespace ccltune::core

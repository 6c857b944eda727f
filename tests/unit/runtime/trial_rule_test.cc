// The in-program trial's rule (runtime/confirm/trial_rule.h): which arm each call runs, the
// verdict from every rank's medians, and the exchange's text.
#include "runtime/confirm/trial_rule.h"

#include <gtest/gtest.h>

namespace ccltune::runtime {
namespace {

std::vector<int> Arms(int per_arm, int candidates) {
  std::vector<int> arms;
  for (int k = 0; TrialArmOf(k, per_arm, candidates).has_value(); ++k)
    arms.push_back(*TrialArmOf(k, per_arm, candidates));
  return arms;
}

TEST(TrialRule, CallsGoRoundTheArmsFromTheChoiceToNcclThenStop) {
  // One candidate: the choice (0), then NCCL's own (1), alternating; an untimed first round,
  // then 3 timed ones.
  EXPECT_EQ(Arms(3, 1), (std::vector<int>{0, 1, 0, 1, 0, 1, 0, 1}));
  // With its runner-up (1), NCCL's own is arm 2.
  EXPECT_EQ(Arms(2, 2), (std::vector<int>{0, 1, 2, 0, 1, 2, 0, 1, 2}));
  EXPECT_FALSE(TrialArmOf(8, 3, 1).has_value());
  EXPECT_FALSE(TrialArmOf(-1, 3, 1).has_value());
  EXPECT_FALSE(TrialArmOf(0, 0, 1).has_value());  // off: no call is a trial's
  EXPECT_FALSE(TrialArmOf(0, 3, 0).has_value());  // nothing to try
}

TEST(TrialRule, EachArmsFirstCallIsUntimed) {
  std::vector<bool> timed;
  for (int k = 0; TrialArmOf(k, 2, 2).has_value(); ++k) timed.push_back(TrialCallTimed(k, 2));
  EXPECT_EQ(timed, (std::vector<bool>{false, false, false, true, true, true, true, true, true}));
  EXPECT_FALSE(TrialCallTimed(1, 1));
  EXPECT_TRUE(TrialCallTimed(2, 1));
}

// Max across ranks per arm, then the winner rule: the choice must beat NCCL's own by more
// than the threshold, or NCCL's own runs from then on.
TEST(TrialRule, TheChoiceStaysOnlyWhereItBeatsNcclByMoreThanTheNoise) {
  // The slowest rank decides each arm: 30 against 44.
  const TrialVerdict keep = JudgeTrial({"oneshot:mode=push"}, {{25, 44}, {30, 40}, {28, 41}}, 8, 3);
  EXPECT_TRUE(keep.keep());
  EXPECT_EQ(keep.pick, 0);
  EXPECT_EQ(keep.us, (std::vector<double>{30, 44}));
  EXPECT_EQ(keep.line,
            "oneshot:mode=push 30.00 us a call in this program against NCCL's own 44.00 us "
            "(median of 8 calls each, max of 3 ranks): kept");
  // DDP's step: the 32-CTA communicator took 677 us a call beside the backward pass's kernels.
  const TrialVerdict drop = JudgeTrial({"nccl:ctas=32"}, {{677, 458}, {650, 457}}, 8, 3);
  EXPECT_FALSE(drop.keep());
  EXPECT_EQ(drop.pick, -1);
  EXPECT_EQ(drop.line,
            "nccl:ctas=32 677.00 us a call in this program against NCCL's own 458.00 us "
            "(median of 8 calls each, max of 2 ranks): NCCL's own from now on");
  // Within the noise (97 vs 100 is not below 97) NCCL's own stays.
  EXPECT_FALSE(JudgeTrial({"x"}, {{97, 100}}, 4, 3).keep());
  EXPECT_TRUE(JudgeTrial({"x"}, {{96.9, 100}}, 4, 3).keep());
}

// The runner-up replaces the choice only by beating it by more than the noise, and then must
// beat NCCL's own as the choice would have.
TEST(TrialRule, TheRunnerUpReplacesTheChoiceOnlyWhereItBeatsItAndNccl) {
  const std::vector<std::string> both = {"p2p:blocks=64", "p2p:blocks=16"};
  // FSDP2's all-gather beside the GEMMs: the wide grid slower than NCCL, the narrow one faster.
  const TrialVerdict lighter = JudgeTrial(both, {{667, 480, 520}, {650, 470, 515}}, 8, 3);
  EXPECT_EQ(lighter.pick, 1);
  EXPECT_EQ(lighter.us, (std::vector<double>{667, 480, 520}));
  EXPECT_EQ(lighter.line,
            "p2p:blocks=64 667.00 us, p2p:blocks=16 480.00 us a call in this program against "
            "NCCL's own 520.00 us (median of 8 calls each, max of 2 ranks): p2p:blocks=16 from "
            "now on");
  // Within the noise of the choice: the choice stays (and beats NCCL).
  EXPECT_EQ(JudgeTrial(both, {{100, 97.5, 200}}, 4, 3).pick, 0);
  // Both slower than NCCL's own: NCCL's.
  const TrialVerdict none = JudgeTrial(both, {{300, 250, 240}}, 4, 3);
  EXPECT_EQ(none.pick, -1);
  EXPECT_NE(none.line.find("): NCCL's own from now on"), std::string::npos) << none.line;
  // The runner-up beats the choice but not NCCL by more than the noise: NCCL's.
  EXPECT_EQ(JudgeTrial(both, {{300, 98, 100}}, 4, 3).pick, -1);
}

TEST(TrialRule, MediansTravelAsOnePositiveNumberAnArm) {
  const auto back = DecodeMedians(EncodeMedians({12.345678901234, 0.5, 7}), 3);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, (std::vector<double>{12.345678901234, 0.5, 7}));
  for (const char* bad : {"", "1", "1 2 3", "0 2", "1 -2", "nan 2", "1 inf", "a b"}) {
    const auto r = DecodeMedians(bad, 2);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message(), "trial medians '" + std::string(bad) +
                                        "': expected 2 positive numbers (us per arm, NCCL's own "
                                        "last)");
  }
  EXPECT_FALSE(DecodeMedians("1 2", 3).ok());  // a rank that tried fewer arms
}

}  // namespace
}  // namespace ccltune::runtime

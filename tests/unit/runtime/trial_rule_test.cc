// The in-program trial's rule (runtime/confirm/trial_rule.h): which side each call runs, the
// verdict from every rank's medians, and the exchange's text.
#include "runtime/confirm/trial_rule.h"

#include <gtest/gtest.h>

namespace ccltune::runtime {
namespace {

TEST(TrialRule, CallsAlternateFromTheChoiceThenStop) {
  std::vector<TrialSide> sides;
  for (int k = 0; TrialSideOf(k, 3).has_value(); ++k) sides.push_back(*TrialSideOf(k, 3));
  EXPECT_EQ(sides,
            (std::vector<TrialSide>{TrialSide::kChoice, TrialSide::kNccl, TrialSide::kChoice,
                                    TrialSide::kNccl, TrialSide::kChoice, TrialSide::kNccl}));
  EXPECT_FALSE(TrialSideOf(6, 3).has_value());
  EXPECT_FALSE(TrialSideOf(-1, 3).has_value());
  EXPECT_FALSE(TrialSideOf(0, 0).has_value());  // off: no call is a trial's
}

// Max across ranks per side, then the winner rule: the choice must beat NCCL's own by more
// than the threshold, or NCCL's own runs from then on.
TEST(TrialRule, TheChoiceStaysOnlyWhereItBeatsNcclByMoreThanTheNoise) {
  // The slowest rank decides each side: 30 against 44.
  const TrialVerdict keep = JudgeTrial("oneshot:mode=push", {{25, 44}, {30, 40}, {28, 41}}, 8, 3);
  EXPECT_TRUE(keep.keep);
  EXPECT_DOUBLE_EQ(keep.choice_us, 30);
  EXPECT_DOUBLE_EQ(keep.nccl_us, 44);
  EXPECT_EQ(keep.line,
            "oneshot:mode=push 30.00 us a call in this program against NCCL's own 44.00 us "
            "(median of 8 calls each, max of 3 ranks): kept");
  // DDP's step: the 32-CTA communicator took 677 us a call beside the backward pass's kernels.
  const TrialVerdict drop = JudgeTrial("nccl:ctas=32", {{677, 458}, {650, 457}}, 8, 3);
  EXPECT_FALSE(drop.keep);
  EXPECT_EQ(drop.line,
            "nccl:ctas=32 677.00 us a call in this program against NCCL's own 458.00 us "
            "(median of 8 calls each, max of 2 ranks): NCCL's own from now on");
  // Within the noise (97 vs 100 is not below 97) NCCL's own stays.
  EXPECT_FALSE(JudgeTrial("x", {{97, 100}}, 4, 3).keep);
  EXPECT_TRUE(JudgeTrial("x", {{96.9, 100}}, 4, 3).keep);
}

TEST(TrialRule, MediansTravelAsTwoPositiveNumbers) {
  const auto back = DecodeMedians(EncodeMedians(12.345678901234, 0.5));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_DOUBLE_EQ(back->first, 12.345678901234);
  EXPECT_DOUBLE_EQ(back->second, 0.5);
  for (const char* bad : {"", "1", "1 2 3", "0 2", "1 -2", "nan 2", "1 inf", "a b"}) {
    const auto r = DecodeMedians(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message(), "trial medians '" + std::string(bad) +
                                        "': expected two positive numbers (choice us, NCCL us)");
  }
}

}  // namespace
}  // namespace ccltune::runtime

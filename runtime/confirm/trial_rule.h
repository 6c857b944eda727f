// The in-program trial of a tuned choice (CCLTUNE_CONFIRM_CALLS, docs/winners.md): what the
// tune measured alone is not always what a program gets. An eager program's calls overlap its
// own kernels and wait on its host; there a choice that won alone can run slower than NCCL's
// own (a DDP step's all-reduces on a 32-CTA communicator: 0.70x per call). So where the
// setting is on, the first 2 x N eager calls of each tuned size on a program's own buffers
// alternate between the choice and NCCL's own, each timed on the GPU with events around it;
// then the ranks agree on the medians (max across ranks, as the tune reduces) and the choice
// stays only where it beats NCCL's own by more than the noise threshold, the winner rule.
// This file is the rule, without the GPU: which side a call runs, and the verdict.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/status.h"

namespace ccltune::runtime {

// CCLTUNE_CONFIRM_CALLS: timed calls per side of a trial, 0 (off, the default) .. this.
inline constexpr int kMaxConfirmCalls = 64;

enum class TrialSide { kChoice, kNccl };

// The side of an entry's call number `k` (0-based, the same on every rank: collectives are
// issued in one order): the choice first, then NCCL's own, alternating, so drift in the
// program's load falls on both alike; nullopt once both sides had `per_side` calls.
std::optional<TrialSide> TrialSideOf(int k, int per_side);

struct TrialVerdict {
  bool keep = false;
  double choice_us = 0;  // the median per call, max across ranks
  double nccl_us = 0;
  std::string line;  // one line for the log: both times and what runs from now on
};

// From every rank's medians (choice, NCCL's own), by rank. `choice` names the choice.
TrialVerdict JudgeTrial(std::string_view choice,
                        const std::vector<std::pair<double, double>>& medians_by_rank, int per_side,
                        double noise_threshold_percent);

// One rank's medians as the ranks exchange them ("choice_us nccl_us"), and back. DataLoss when
// the text is not two positive finite numbers.
std::string EncodeMedians(double choice_us, double nccl_us);
core::Result<std::pair<double, double>> DecodeMedians(std::string_view text);

}  // namespace ccltune::runtime

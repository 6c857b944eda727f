// The in-program trial of a tuned choice (CCLTUNE_CONFIRM_CALLS, docs/winners.md): what the
// tune measured alone is not always what a program gets. An eager program's calls overlap its
// own kernels and wait on its host; there a choice that won alone can run slower than NCCL's
// own (a DDP step's all-reduces on a 32-CTA communicator: 0.70x per call), and a lighter
// choice that lost alone by a little can be the faster one. So where the setting is on, the
// first eager calls of each tuned size on a program's own buffers go round the trial's arms:
// the size's choice, its runner-up (the next fastest choice plain buffers run, where the
// record has one), then NCCL's own, an untimed round then N timed ones, each call timed on the
// GPU with events around it; then the ranks agree on the medians (max across ranks, as the tune
// reduces). The runner-up replaces the choice only where it beats it by more than the noise
// threshold, and the one left stays only where it beats NCCL's own by more than the threshold: the
// winner rule. This file is the rule, without the GPU: which arm a call runs, and the verdict.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"

namespace ccltune::runtime {

// CCLTUNE_CONFIRM_CALLS: timed calls per arm of a trial, 0 (off, the default) .. this.
inline constexpr int kMaxConfirmCalls = 64;
// The candidates a trial tries before NCCL's own: the choice and its runner-up.
inline constexpr int kMaxTrialCandidates = 2;

// The arm of an entry's call number `k` (0-based, the same on every rank: collectives are
// issued in one order) in a trial of `candidates` choices: 0 .. candidates - 1 the choices,
// `candidates` NCCL's own, in turn (the choice first), so drift in the program's load falls on
// every arm alike. A first round is untimed (TrialCallTimed), then `per_arm` timed rounds;
// nullopt after them.
std::optional<int> TrialArmOf(int k, int per_arm, int candidates);
// Whether call `k` is timed: each arm's first call is not, for it pays what a first call pays
// (a communicator's connections: over sockets, a fresh 8-CTA communicator's first two calls
// had a median of 79.7 ms where later ones took 3.8 ms), which would outweigh the median when
// N is small.
bool TrialCallTimed(int k, int candidates);

struct TrialVerdict {
  int pick = -1;           // the candidate that runs from now on; -1: NCCL's own
  std::vector<double> us;  // per arm, the median per call, max across ranks (NCCL's last)
  std::string line;        // one line for the log: every arm's time and what runs from now on
  bool keep() const { return pick >= 0; }
};

// From every rank's medians (one per arm, NCCL's own last), by rank. `candidates` names the
// choices (1 or kMaxTrialCandidates), the table's first.
TrialVerdict JudgeTrial(const std::vector<std::string>& candidates,
                        const std::vector<std::vector<double>>& medians_by_rank, int per_arm,
                        double noise_threshold_percent);

// One rank's medians as the ranks exchange them (space-separated, NCCL's own last), and back.
// DataLoss when the text is not `arms` positive finite numbers.
std::string EncodeMedians(const std::vector<double>& us);
core::Result<std::vector<double>> DecodeMedians(std::string_view text, std::size_t arms);

}  // namespace ccltune::runtime

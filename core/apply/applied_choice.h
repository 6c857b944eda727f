// What the plugin applies for one tuned size, and why. One function for the plugin (per
// communicator, at init) and for `ccltune export --format nccl-tuner-csv|applied-json`, so
// an export made with --min-ctas N says exactly what the plugin does under NCCL_MIN_CTAS=N.
//
// Why a winner is not always applied as it is: ccltune measures `nccl:ctas=N` on a
// communicator created with minCTAs = maxCTAs = N (docs/design.md §5). A tuner can only set
// *nChannels, and NCCL caps that at the communicator's channel count, which NCCL fixes at
// init and a tuner can neither see nor change. The one lower bound the plugin can know is
// NCCL_MIN_CTAS (NCCL reads it at communicator init, in the same process): the "channel
// ceiling". A ctas=N winner above it would silently run with fewer channels than measured,
// so the fastest measured choice the tuner *can* reproduce is applied instead.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/apply/forced_choice.h"
#include "core/apply/record_parser.h"
#include "core/base/status.h"
#include "core/plan/plan.h"

namespace ccltune::apply {

// docs/design.md §2's default noiseThresholdPercent: a substitute is forced only when it beats
// `nccl` by more than this, the rule by which ccltune picks winners (core::PickWinner).
inline constexpr double kNoiseThresholdPercent = core::BenchmarkSpec{}.noise_threshold_percent;

struct AppliedChoice {
  ForcedChoice forced;  // what getCollInfo sets; forces nothing when NCCL decides
  // The measured choice the plugin reproduces: the winner, a substitute, or "nccl" (force
  // nothing: NCCL's own choice, which ccltune measured as `nccl`). Empty when NCCL is left
  // alone without a measurement to compare with: the winner is not NCCL-internal (no tuner
  // can select it), or a substitute was needed and the record has no usable `nccl` time.
  std::string name;
  double time_us = 0;        // ccltune's measured time of `name`; 0 when unknown
  std::string reason;        // one line for logs and exports
  bool substituted = false;  // the winner needs more channels than the ceiling
};

// The rule both consumers apply when they cannot run a size's winner as measured: the
// fastest measured choice they can run, when it beats `nccl` by more than
// kNoiseThresholdPercent (the margin by which core::PickWinner lets any choice beat the
// default), else `nccl` itself. `why_not(name)` is "" when the consumer can run `name`,
// else the reason; `nccl` is never asked about. `found` is false when the list has no
// usable `nccl` time: then nothing is chosen and the consumer leaves NCCL alone.
struct RuleOutcome {
  bool found = false;
  std::string name;    // "nccl" or the substitute
  double time_us = 0;  // its measured time
  std::string reason;  // "applying X (a us vs nccl b us)" or "applying nccl (...; why)"
};
RuleOutcome FastestRunnable(const std::vector<TimedChoice>& measured,
                            const std::function<std::string(const std::string&)>& why_not,
                            std::string_view runner_up_kind);

// "" when an eager program's own buffers may run `name`: the record has no host time for
// `nccl` (a graph tune's), or `name` is eager-safe (WhyNotEager, any_buffer.h) and its host
// time is no more than kNoiseThresholdPercent above `nccl`'s (core::IssueCostQualifies). The
// tune's anyBuffer follows the same two rules. Else the reason (for the cost, naming both).
std::string WhyNotToIssue(const std::vector<TimedChoice>& measured, const std::string& name);

// `channel_ceiling`: the channels the application's communicators are known to have
// (NCCL_MIN_CTAS); 0 = unknown, so no choice naming ctas is reproducible.
AppliedChoice ApplyChoice(const WinnerRecord& record, int channel_ceiling);

// "0" or a positive integer (the ceiling); anything else is InvalidArgument saying what
// is allowed. The caller adds which setting it came from.
core::Result<int> ParseChannelCeiling(std::string_view value);

}  // namespace ccltune::apply

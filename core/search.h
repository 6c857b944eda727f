// How a tuning job searches the choices of a problem (issue 25), and the rule that lets the
// adaptive search drop a choice. `exhaustive` measures every applicable choice in full
// (DESIGN §2). `adaptive`, the default, measures the backend's default in full; every other
// choice first runs a few screening rounds (the first rounds of its own full measurement,
// barrier-started, max across ranks) and gets its remaining rounds and the correctness check
// only while the evidence says it can still win. Pure functions, so the rule can be tested
// on synthetic timings; worker/bench_runner.cc applies it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace ccltune::core {

enum class Search { kExhaustive, kAdaptive };

const char* SearchName(Search search);  // "exhaustive", "adaptive"
// Strict: the error names the allowed values ("'fast' is not a known search (allowed: ...)").
Result<Search> ParseSearch(std::string_view text);
std::string AllowedSearches();

// Screening rounds of a choice when the plan asks for `rounds` full rounds: at most 2, and
// always fewer than `rounds`, so a choice that survives still runs its full count; 0 (no
// screening, measure in full) when rounds is 1.
int ScreeningRounds(int rounds);

// A choice measured in full and verified correct on this problem: its slowest round (µs,
// max across ranks), the pessimistic end of its time.
struct Reference {
  std::string name;
  double max_us = 0;
};

struct ScreeningVerdict {
  bool drop = false;
  std::string reason;  // why it was dropped (the record's reason); empty when kept
};

// The pruning rule. A screened choice is dropped only when every one of its screening rounds
// (µs, max across ranks) is slower than (1 + noise/100) x the slowest full round of the best
// reference (the reference whose slowest round is fastest). Its fastest round is compared
// with the reference's slowest, so a choice whose rounds overlap the best's spread widened by
// the noise threshold is always kept; and a dropped choice could only have won if its own
// median came out more than the threshold below every round it ran, which is more than the
// noise the threshold allows. Nothing is dropped without a reference.
ScreeningVerdict JudgeScreening(const std::vector<double>& screening_us,
                                const std::vector<Reference>& references,
                                double noise_threshold_percent);

}  // namespace ccltune::core

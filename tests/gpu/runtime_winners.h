// TEST HELPER: a results file (the format of `ccltune export --format json`) whose winners
// send the runtime down every path it has: for each op, dtype and reduction, one tuned size
// per choice kind, each made the winner of its size by its measured time, with slower
// runnable choices behind it so the rule's substitutes differ when the winner cannot run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/types.h"

namespace ccltune::testing {

inline constexpr const char* kRuntimeTestFingerprint = "runtime-gpu-test";

struct TunedSize {
  core::Op op;
  std::uint64_t bytes;
  std::string winner;
};

// Every (op, size, winner) the file holds (the same for each dtype and redop).
std::vector<TunedSize> RuntimeTestSizes();
// The JSON array text for `world` ranks.
std::string RuntimeTestResults(int world);

}  // namespace ccltune::testing

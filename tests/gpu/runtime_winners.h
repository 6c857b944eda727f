// TEST HELPER: a results file (the format of `ccltune export --format json`) whose winners
// send the runtime down every path it has: for each op, dtype and reduction (and for the
// all-reduce + epilogue ops, each epilogue kind), one tuned size
// per choice kind, each made the winner of its size by its measured time, with slower
// runnable choices behind it so the rule's substitutes differ when the winner cannot run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/plan/epilogue.h"
#include "core/plan/types.h"

namespace ccltune::testing {

inline constexpr const char* kRuntimeTestFingerprint = "runtime-gpu-test";

struct TunedSize {
  core::Op op;
  std::uint64_t bytes;
  std::string winner;
};

// A tuned all-reduce + epilogue (issue 16): sum, every float dtype, bytes = tokens x
// hidden x dtype size.
struct TunedEpilogue {
  core::EpilogueKind kind;
  int hidden;
  std::uint64_t tokens;
  std::string winner;
};

// Every (op, size, winner) the file holds (the same for each dtype and redop).
std::vector<TunedSize> RuntimeTestSizes();
// Every epilogue problem the file holds: fused winners (LL, pull, two-shot) and unfused
// ones (our kernels, rs+ag, ctas), each followed by choices plain buffers can run.
std::vector<TunedEpilogue> RuntimeTestEpilogues();
// The JSON array text for `world` ranks (plain and epilogue records).
std::string RuntimeTestResults(int world);

// Issue 33, for ranks on 2 nodes x 2: all-reduces whose winner is the hierarchical all-reduce
// (64 KiB, 512 KiB, 4 MiB), one whose peer-memory winner cannot run across nodes, and an
// allGather left to NCCL; every dtype and reduction, the same fallbacks behind each winner.
inline constexpr const char* kHierTestChoice = "hier:blocks=16,threads=256";
std::vector<TunedSize> HierTestSizes();
std::string HierTestResults(int world);

}  // namespace ccltune::testing

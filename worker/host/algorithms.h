// The host backend's algorithm catalog: one AlgoFn per (collective, choice), each in its own
// file, plus the shared ring/direct building blocks they are made of.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/plan/types.h"
#include "worker/host/host_comm.h"

namespace ccltune::worker::host {

struct Algorithm {
  core::Op op;
  const char* name;  // the choice name (docs/design.md §5)
  AlgoFn run;
  bool test_only = false;  // offered only with CCLTUNE_ENABLE_TEST_CHOICES=1
  // Added to every op's measured time, never slept: only `test-slow` (a test-only choice
  // that is deterministically slower than any other on any machine and load) sets it.
  double test_added_op_seconds = 0;
  // Multiplies every op's measured time: `test-pooled` and `test-fast`, test-only choices
  // faster than any other by a margin no load reverses, set it.
  double test_time_scale = 1;
};

// `test-slow`'s addition: a reference would need a round of over ~9.7 s an op to keep it.
inline constexpr double kTestSlowAddedOpSeconds = 10;
// `test-pooled` (the winner that needs pooled buffers, core/apply/any_buffer.h) and
// `test-fast` (the best choice for any buffer): 10x apart, and test-fast 10x below the ring.
inline constexpr double kTestPooledTimeScale = 0.01;
inline constexpr double kTestFastTimeScale = 0.1;

// Catalog order: per op, the default `ring` first (docs/design.md §2.6: always measured).
const std::vector<Algorithm>& Algorithms();
const Algorithm* FindAlgorithm(core::Op op, std::string_view name);
std::string AlgorithmNames(core::Op op, bool with_test_choices);  // "ring, direct"

// Building blocks (steps are numbered from `first_step`, all ranks alike).
// Ring reduce-scatter in place over `work`: afterwards rank r's block r holds the reduction
// of block r over all ranks. Uses scratch slot 0. Steps 0 .. world-2.
core::Status RingReduceScatter(HostComm& c, const CollArgs& a, std::byte* work,
                               const Blocks& blocks);
// Ring all-gather in place: rank r contributes block r of `buf`. Steps first .. first+world-2.
core::Status RingAllGather(HostComm& c, std::byte* buf, const Blocks& blocks, std::size_t elem,
                           int first_step);
// Every rank sends block k of `in` to rank k; rank r reduces the blocks r it receives in rank
// order into `out` (size(r) elements). Uses scratch slot 1. One step.
core::Status DirectReduceScatter(HostComm& c, const CollArgs& a, const std::byte* in,
                                 std::byte* out, const Blocks& blocks, int step);
// Every rank sends its block of `buf` to every other rank. One step.
core::Status DirectAllGather(HostComm& c, std::byte* buf, const Blocks& blocks, std::size_t elem,
                             int step);

core::Status AllReduceRing(HostComm& c, const CollArgs& a);
core::Status AllReduceRecursiveDoubling(HostComm& c, const CollArgs& a);
core::Status AllReduceDirect(HostComm& c, const CollArgs& a);
core::Status AllReduceRsAg(HostComm& c, const CollArgs& a);
core::Status AllGatherRing(HostComm& c, const CollArgs& a);
core::Status AllGatherDirect(HostComm& c, const CollArgs& a);
core::Status ReduceScatterRing(HostComm& c, const CollArgs& a);
core::Status ReduceScatterDirect(HostComm& c, const CollArgs& a);
core::Status AllToAllRing(HostComm& c, const CollArgs& a);
core::Status AllToAllPairwise(HostComm& c, const CollArgs& a);
core::Status AllToAllDirect(HostComm& c, const CollArgs& a);
core::Status BroadcastRing(HostComm& c, const CollArgs& a);
core::Status BroadcastBinomial(HostComm& c, const CollArgs& a);
core::Status BroadcastDirect(HostComm& c, const CollArgs& a);
// Test-only: the hang rank blocks (polling deadline and token) instead of communicating.
core::Status TestHang(HostComm& c, const CollArgs& a);

inline int Mod(int x, int n) { return ((x % n) + n) % n; }

}  // namespace ccltune::worker::host

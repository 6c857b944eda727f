#include "worker/host/algorithms.h"

namespace ccltune::worker::host {

const std::vector<Algorithm>& Algorithms() {
  using core::Op;
  static const std::vector<Algorithm> kAll = {
      {Op::kAllReduce, "ring", &AllReduceRing},
      {Op::kAllReduce, "recursive-doubling", &AllReduceRecursiveDoubling},
      {Op::kAllReduce, "direct", &AllReduceDirect},
      {Op::kAllReduce, "rs+ag", &AllReduceRsAg},
      {Op::kAllGather, "ring", &AllGatherRing},
      {Op::kAllGather, "direct", &AllGatherDirect},
      {Op::kReduceScatter, "ring", &ReduceScatterRing},
      {Op::kReduceScatter, "direct", &ReduceScatterDirect},
      {Op::kAllToAll, "ring", &AllToAllRing},
      {Op::kAllToAll, "pairwise", &AllToAllPairwise},
      {Op::kAllToAll, "direct", &AllToAllDirect},
      {Op::kBroadcast, "ring", &BroadcastRing},
      {Op::kBroadcast, "binomial", &BroadcastBinomial},
      {Op::kBroadcast, "direct", &BroadcastDirect},
      // The adaptive search must drop it wherever a reference exists (integration tests).
      {Op::kAllReduce, "test-slow", &AllReduceRing, true, kTestSlowAddedOpSeconds},
      // Catalog order puts the pooled winner first, so that without the any-buffer rule
      // (docs/design.md §2) screening would judge test-fast against it and drop it.
      {Op::kAllReduce, "test-pooled", &AllReduceRing, true, 0, kTestPooledTimeScale},
      {Op::kAllReduce, "test-fast", &AllReduceRing, true, 0, kTestFastTimeScale},
      {Op::kAllReduce, "test-hang", &TestHang, true},
      {Op::kAllGather, "test-hang", &TestHang, true},
      {Op::kReduceScatter, "test-hang", &TestHang, true},
      {Op::kAllToAll, "test-hang", &TestHang, true},
      {Op::kBroadcast, "test-hang", &TestHang, true},
  };
  return kAll;
}

const Algorithm* FindAlgorithm(core::Op op, std::string_view name) {
  for (const Algorithm& a : Algorithms()) {
    if (a.op == op && name == a.name) return &a;
  }
  return nullptr;
}

std::string AlgorithmNames(core::Op op, bool with_test_choices) {
  std::string out;
  for (const Algorithm& a : Algorithms()) {
    if (a.op != op || (a.test_only && !with_test_choices)) continue;
    out += (out.empty() ? "" : ", ") + std::string(a.name);
  }
  return out;
}

}  // namespace ccltune::worker::host

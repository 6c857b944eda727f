// The runtime's dispatch table: per (op, dtype, redop, epilogue) the tuned sizes, ascending,
// and for each what the runtime runs there, for plain buffers and for pooled ones. Built once
// at init from the fingerprint's published records; immutable after, so any thread may read
// it. A call of n bytes uses the entry of the tuned size nearest to n in log2 space
// (core::NearestLog2Bucket, the cache's lookup rule); a slice without records means NCCL.
//
// All-reduces with an epilogue (issue 16) have slices of their own, one per (dtype, kind,
// hidden): their records were measured with the epilogue (their `nccl` is NCCL's all-reduce
// plus the separate kernel), so they say nothing about the bare all-reduce, and the plain
// slices say nothing about them. Their sizes are tokens x hidden x dtype bytes; eps is not
// keyed (it changes no timing).
//
// Which choice an entry applies is the rule the NCCL tuner plugin applies too
// (core/apply/applied_choice.h): the winner when the runtime can run it for that buffer
// class, else the fastest measured choice it can run that beats `nccl` by more than the
// noise threshold, else `nccl`.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/apply/choice_spec.h"
#include "core/apply/record_parser.h"
#include "core/plan/epilogue.h"
#include "core/plan/types.h"
#include "runtime/runnable.h"

namespace ccltune::runtime {

// What one tuned size runs for one buffer class.
struct AppliedRun {
  std::string name = "nccl";  // a measured choice name; "nccl" = NCCL's own choice
  apply::ChoiceSpec spec;     // `name` read
  double time_us = 0;         // its measured time; 0 when the record had no usable nccl time
  std::string reason;         // one line: why this one
};

struct TableEntry {
  std::uint64_t bytes = 0;
  std::string winner;  // as published
  AppliedRun plain;
  AppliedRun pooled;
  // A captured call on the program's own tensors in direct mode (runtime/direct/): the
  // fastest of what plain buffers run and of the pull kernels direct mode runs on registered
  // tensors (apply::RunsDirect), which the adaptive search measures in full for this reason.
  AppliedRun direct;
  // Plain buffers' runner-up: the fastest other choice they run that beats `nccl` by more than
  // the noise threshold and needs no communicator of its own (no ctas=N, no hier), else
  // `nccl`. The in-program trial (confirm/trial_rule.h) tries it beside `plain`: a choice
  // that lost alone by a little can win beside the program's own kernels.
  AppliedRun plain_next;
  // The run for buffers of class `cls`: pooled or plain.
  const AppliedRun& For(BufferClass cls) const {
    return cls == BufferClass::kPooled ? pooled : plain;
  }
};

// op, dtype, redop, epilogue kind, hidden (0 for none).
using SliceKey = std::tuple<core::Op, core::Dtype, core::RedOp, core::EpilogueKind, int>;

class DispatchTable {
 public:
  DispatchTable() = default;
  // Keeps records of ops the runtime offers (allReduce, allGather, reduceScatter) and of
  // `caps.world` ranks, and epilogue records of sum all-reduces of float types; the first
  // record of each (op, dtype, redop, epilogue, bytes) wins.
  static DispatchTable Build(const std::vector<apply::WinnerRecord>& records,
                             const Capabilities& caps);

  // nullptr when the slice has no tuned size. `epilogue`: its kind and hidden pick the
  // slice (none: the plain collective's).
  const TableEntry* Lookup(core::Op op, core::Dtype dtype, core::RedOp redop, std::uint64_t bytes,
                           const core::Epilogue& epilogue = {}) const;
  const AppliedRun& Choose(core::Op op, core::Dtype dtype, core::RedOp redop, std::uint64_t bytes,
                           BufferClass cls, const core::Epilogue& epilogue = {}) const;

  // The entry's `direct` run (no epilogue slices: direct mode serves plain all-reduces).
  const AppliedRun& ChooseDirect(core::Op op, core::Dtype dtype, core::RedOp redop,
                                 std::uint64_t bytes) const;

  std::size_t size() const;
  // fn(key, entry) for every tuned size of every slice, in order.
  template <class F>
  void ForEachEntry(F fn) const {
    for (const auto& [key, entries] : slices_)
      for (const TableEntry& e : entries) fn(key, e);
  }
  // The CTA counts of the `nccl:ctas=N` choices entries apply: the communicators to split.
  std::set<int> CtasNeeded() const;
  // Whether some entry applies the hierarchical all-reduce: the node team to build.
  bool HierNeeded() const;
  // How many entries have a runner-up for plain buffers (TableEntry::plain_next): the sizes
  // an in-program trial tries with three arms.
  std::size_t RunnersUp() const;
  // "allReduce bf16/sum: 17 sizes, 12 not NCCL's own (9 for plain buffers)", per slice;
  // an epilogue slice reads "allReduce bf16/sum+residualRmsNorm,hidden=4096: ...".
  std::string Describe() const;
  // Every slice, size and applied name in order: equal on ranks that built the same table.
  std::string Digest() const;

 private:
  std::map<SliceKey, std::vector<TableEntry>> slices_;  // entries ascending by bytes
  std::map<SliceKey, std::vector<std::uint64_t>> sizes_;
};

}  // namespace ccltune::runtime

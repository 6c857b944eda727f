// The per-communicator table of winners the plugin consults on every collective launch.
//
// NCCL's getCollInfo (ABI v4/v5) is given the collective and its byte count, not the
// element type or reduction op. So per collective one *slice* (dtype, redop) of the tuned
// records is used: CCLTUNE_PLUGIN_DTYPE when set, else the first dtype that has records in
// the order bf16, fp16, fp32, int32, int8 (training traffic is mostly bf16/fp16); the
// reduction op sum, else max, min, prod. Within the slice the nearest tuned size in log2
// space decides (core::NearestLog2Bucket, the cache's lookup rule). What each size applies
// is decided once, in Build, by ApplyChoice (applied_choice.h) for the communicator's
// channel ceiling. Immutable after Build: safe to read from any thread. `ccltune export`
// builds the same table, so its files say what the plugin does.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/apply/applied_choice.h"
#include "core/apply/record_parser.h"
#include "core/apply/tuner_abi.h"
#include "core/plan/types.h"

namespace ccltune::apply {

struct Slice {
  core::Dtype dtype;
  core::RedOp redop;
};
using SliceKey = std::tuple<core::Op, core::Dtype, core::RedOp>;

// The ncclFunc_t NCCL consults the tuner with for an op; -1 for allToAll (send/recv).
int NcclFuncOf(core::Op op);
// Per op, the slice to use among those that have records (see the header comment).
std::map<core::Op, Slice> SelectSlices(const std::set<SliceKey>& available,
                                       std::optional<core::Dtype> pinned);

// One tuned size: the published record and what the plugin applies for it.
struct TableEntry {
  WinnerRecord record;
  AppliedChoice applied;
};

class WinnerTable {
 public:
  WinnerTable() = default;
  // Keeps the records of each op's selected slice, one per size (the first wins; never a
  // record with an epilogue: NCCL cannot run one), and decides each one's applied choice
  // for `channel_ceiling` (0 = unknown).
  static WinnerTable Build(std::vector<WinnerRecord> records, std::optional<core::Dtype> pinned,
                           int channel_ceiling);

  // The entry of the tuned size nearest to n_bytes for an ncclFunc_t; nullptr when none.
  const TableEntry* Lookup(int nccl_func, std::uint64_t n_bytes) const;
  // An ncclFunc_t's entries, ascending by bytes (empty for an unknown func).
  const std::vector<TableEntry>& Entries(int nccl_func) const;
  std::size_t size() const;
  // "allReduce bf16/sum 12 sizes (9 forced, 2 substituted); allGather ..." for the init log.
  std::string Describe() const;

 private:
  std::array<std::vector<TableEntry>, abi::kNumFuncs> by_func_;  // ascending bytes
  std::array<std::vector<std::uint64_t>, abi::kNumFuncs> sizes_;
};

// "allReduce bf16/sum 1048576 B" for log lines and exports.
std::string EntryName(const WinnerRecord& record);

}  // namespace ccltune::apply

// Slice selection and nearest-size lookup (winner_table.h).
#include "core/apply/winner_table.h"

#include <algorithm>

#include "core/results/result_store.h"

namespace ccltune::apply {
namespace {

const std::vector<core::Dtype>& DtypePreference() {
  static const std::vector<core::Dtype> order{core::Dtype::kBf16, core::Dtype::kFp16,
                                              core::Dtype::kFp32, core::Dtype::kInt32,
                                              core::Dtype::kInt8};
  return order;
}

// core::AllRedOps' order (sum first), then the non-reducing ops' kNone.
const std::vector<core::RedOp>& RedOpPreference() {
  static const std::vector<core::RedOp> order = [] {
    std::vector<core::RedOp> v = core::AllRedOps();
    v.push_back(core::RedOp::kNone);
    return v;
  }();
  return order;
}

std::optional<Slice> SliceFor(core::Op op, const std::set<SliceKey>& available,
                              std::optional<core::Dtype> pinned) {
  std::vector<core::Dtype> dtypes = pinned ? std::vector<core::Dtype>{*pinned} : DtypePreference();
  for (core::Dtype d : dtypes) {
    for (core::RedOp r : RedOpPreference()) {
      if (available.count({op, d, r}) != 0) return Slice{d, r};
    }
  }
  return std::nullopt;
}

// "allReduce bf16/sum"
std::string SliceName(const WinnerRecord& r) {
  return std::string(core::OpName(r.op)) + " " + core::DtypeName(r.dtype) + "/" +
         core::RedOpName(r.redop);
}

}  // namespace

int NcclFuncOf(core::Op op) {
  switch (op) {
    case core::Op::kAllReduce:
      return abi::kFuncAllReduce;
    case core::Op::kAllGather:
      return abi::kFuncAllGather;
    case core::Op::kReduceScatter:
      return abi::kFuncReduceScatter;
    case core::Op::kBroadcast:
      return abi::kFuncBroadcast;
    case core::Op::kAllToAll:
      return -1;
  }
  return -1;
}

std::map<core::Op, Slice> SelectSlices(const std::set<SliceKey>& available,
                                       std::optional<core::Dtype> pinned) {
  std::map<core::Op, Slice> out;
  for (core::Op op : core::AllOps()) {
    if (NcclFuncOf(op) < 0) continue;
    if (auto s = SliceFor(op, available, pinned)) out.emplace(op, *s);
  }
  return out;
}

WinnerTable WinnerTable::Build(std::vector<WinnerRecord> records, std::optional<core::Dtype> pinned,
                               int channel_ceiling) {
  // NCCL runs no epilogue: a record measured with one says nothing about the bare collective.
  records.erase(std::remove_if(records.begin(), records.end(),
                               [](const WinnerRecord& r) { return !r.epilogue.none(); }),
                records.end());
  std::set<SliceKey> available;
  for (const auto& r : records) available.insert({r.op, r.dtype, r.redop});
  const auto slices = SelectSlices(available, pinned);
  WinnerTable t;
  for (auto& r : records) {
    auto it = slices.find(r.op);
    if (it == slices.end() || it->second.dtype != r.dtype || it->second.redop != r.redop) continue;
    const int f = NcclFuncOf(r.op);
    auto& sizes = t.sizes_[f];
    if (std::find(sizes.begin(), sizes.end(), r.bytes) != sizes.end()) continue;
    sizes.push_back(r.bytes);
    AppliedChoice applied = ApplyChoice(r, channel_ceiling);
    t.by_func_[f].push_back(TableEntry{std::move(r), std::move(applied)});
  }
  for (int f = 0; f < abi::kNumFuncs; ++f) {
    auto& v = t.by_func_[f];
    std::sort(v.begin(), v.end(), [](const TableEntry& a, const TableEntry& b) {
      return a.record.bytes < b.record.bytes;
    });
    std::sort(t.sizes_[f].begin(), t.sizes_[f].end());
  }
  return t;
}

const TableEntry* WinnerTable::Lookup(int nccl_func, std::uint64_t n_bytes) const {
  if (nccl_func < 0 || nccl_func >= abi::kNumFuncs || sizes_[nccl_func].empty()) return nullptr;
  const std::uint64_t bucket = core::NearestLog2Bucket(sizes_[nccl_func], n_bytes);
  const auto& v = by_func_[nccl_func];
  auto it = std::lower_bound(v.begin(), v.end(), bucket, [](const TableEntry& e, std::uint64_t b) {
    return e.record.bytes < b;
  });
  return it != v.end() && it->record.bytes == bucket ? &*it : nullptr;
}

const std::vector<TableEntry>& WinnerTable::Entries(int nccl_func) const {
  static const std::vector<TableEntry> kNone;
  return nccl_func >= 0 && nccl_func < abi::kNumFuncs ? by_func_[nccl_func] : kNone;
}

std::size_t WinnerTable::size() const {
  std::size_t n = 0;
  for (const auto& v : by_func_) n += v.size();
  return n;
}

std::string WinnerTable::Describe() const {
  std::string out;
  for (const auto& v : by_func_) {
    if (v.empty()) continue;
    const auto forced = std::count_if(
        v.begin(), v.end(), [](const TableEntry& e) { return e.applied.forced.forces_anything(); });
    const auto substituted = std::count_if(
        v.begin(), v.end(), [](const TableEntry& e) { return e.applied.substituted; });
    if (!out.empty()) out += "; ";
    out += SliceName(v.front().record) + " " + std::to_string(v.size()) + " sizes (" +
           std::to_string(forced) + " forced, " + std::to_string(substituted) + " substituted)";
  }
  return out.empty() ? "no winners" : out;
}

std::string EntryName(const WinnerRecord& r) {
  return SliceName(r) + " " + std::to_string(r.bytes) + " B";
}

}  // namespace ccltune::apply

// NCCL example-tuner CSV (nccl_tuner_csv.h).
#include "worker/export/nccl_tuner_csv.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "plugin/forced_choice.h"
#include "plugin/winner_table.h"

namespace ccltune::worker::exporting {
namespace {

using U128 = unsigned __int128;

// Smallest n with n*n >= p: the first size that is nearer (or tied, which goes to the
// larger bucket in NearestLog2Bucket) to the upper of two buckets whose product is p.
std::uint64_t CeilSqrt(U128 p) {
  auto r = static_cast<std::uint64_t>(std::sqrt(static_cast<long double>(p)));
  while (r > 0 && static_cast<U128>(r) * r >= p) --r;
  while (static_cast<U128>(r) * r < p) ++r;
  return r;
}

const char* CsvCollective(core::Op op) {
  switch (op) {
    case core::Op::kAllReduce:
      return "allreduce";
    case core::Op::kAllGather:
      return "allgather";
    case core::Op::kReduceScatter:
      return "reducescatter";
    case core::Op::kBroadcast:
      return "broadcast";
    case core::Op::kAllToAll:
      return "";
  }
  return "";
}

// The records of each op's slice, ascending by bytes, one per size.
std::vector<std::vector<const core::ResultRecord*>> Slices(
    const std::vector<core::ResultRecord>& records, std::optional<core::Dtype> pinned) {
  std::set<plugin::SliceKey> available;
  for (const auto& r : records) available.insert({r.op, r.dtype, r.redop});
  const auto selected = plugin::SelectSlices(available, pinned);
  std::vector<std::vector<const core::ResultRecord*>> out;
  for (const auto& [op, slice] : selected) {
    std::vector<const core::ResultRecord*> v;
    for (const auto& r : records)
      if (r.op == op && r.dtype == slice.dtype && r.redop == slice.redop && r.bytes > 0)
        v.push_back(&r);
    std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->bytes < b->bytes; });
    v.erase(std::unique(v.begin(), v.end(), [](auto* a, auto* b) { return a->bytes == b->bytes; }),
            v.end());
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace

std::vector<ByteRange> NearestBucketRanges(const std::vector<std::uint64_t>& sizes) {
  std::vector<ByteRange> out;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    ByteRange r{0, std::numeric_limits<std::uint64_t>::max()};
    if (i > 0) r.min_bytes = out.back().max_bytes + 1;
    if (i + 1 < sizes.size())
      r.max_bytes = CeilSqrt(static_cast<U128>(sizes[i]) * sizes[i + 1]) - 1;
    out.push_back(r);
  }
  return out;
}

std::vector<CsvRow> NcclTunerRows(const std::vector<core::ResultRecord>& records, int nodes,
                                  std::optional<core::Dtype> pinned) {
  std::vector<CsvRow> rows;
  for (const auto& slice : Slices(records, pinned)) {
    std::vector<std::uint64_t> sizes;
    for (const auto* r : slice) sizes.push_back(r->bytes);
    const auto ranges = NearestBucketRanges(sizes);
    for (std::size_t i = 0; i < slice.size(); ++i) {
      const auto& r = *slice[i];
      auto forced = plugin::ForcedChoiceFromWinner(r.winner);
      if (!forced.ok() || forced->algo < 0) continue;  // NCCL decides (or cannot be told)
      rows.push_back(CsvRow{CsvCollective(r.op), ranges[i], plugin::AlgoName(forced->algo),
                            plugin::ProtoName(forced->proto),
                            forced->channels > 0 ? forced->channels : -1, nodes,
                            r.world_size > 0 ? r.world_size : -1, r.bytes, r.winner});
    }
  }
  return rows;
}

std::string NcclTunerCsv(const std::vector<core::ResultRecord>& records,
                         const std::string& fingerprint, int nodes,
                         std::optional<core::Dtype> pinned) {
  std::string out =
      "# ccltune winners for fingerprint " + fingerprint +
      ", in the format of NCCL's example tuner plugin (NCCL_TUNER_CONFIG_FILE).\n"
      "# Rows only for NCCL-internal winners that force an algorithm and protocol; sizes "
      "nearest\n# to a bucket that NCCL decides (winner nccl, a ctas-only winner, or a "
      "non-NCCL choice)\n# have no row. Ranges split at geometric midpoints between tuned "
      "sizes.\n# Note: the example plugin sets 1 channel for calls no row matches.\n"
      "# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,"
      "numPipeOps,regBuff\n";
  for (const auto& row : NcclTunerRows(records, nodes, pinned)) {
    out += "# tuned " + std::to_string(row.tuned_bytes) + " B: " + row.winner + "\n";
    out += row.collective + "," + std::to_string(row.range.min_bytes) + "," +
           std::to_string(row.range.max_bytes) + "," + row.algorithm + "," + row.protocol + "," +
           std::to_string(row.channels) + "," + std::to_string(row.nodes) + "," +
           std::to_string(row.ranks) + ",-1,-1\n";
  }
  return out;
}

}  // namespace ccltune::worker::exporting

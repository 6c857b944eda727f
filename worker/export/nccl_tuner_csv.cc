// NCCL example-tuner CSV (nccl_tuner_csv.h).
#include "worker/export/nccl_tuner_csv.h"

#include <cmath>
#include <limits>

#include "core/apply/forced_choice.h"
#include "worker/export/plugin_table.h"

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

std::string MinCtasSetting(int channel_ceiling) {
  return channel_ceiling > 0 ? "with NCCL_MIN_CTAS=" + std::to_string(channel_ceiling)
                             : "without NCCL_MIN_CTAS";
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
                                  std::optional<core::Dtype> pinned, int channel_ceiling) {
  const apply::WinnerTable table = PluginTable(records, pinned, channel_ceiling);
  std::vector<CsvRow> rows;
  for (int func : NcclFuncsInOpOrder()) {
    const auto& entries = table.Entries(func);
    std::vector<std::uint64_t> sizes;
    for (const auto& e : entries) sizes.push_back(e.record.bytes);
    const auto ranges = NearestBucketRanges(sizes);
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const apply::WinnerRecord& r = entries[i].record;
      const apply::AppliedChoice& a = entries[i].applied;
      if (a.forced.algo < 0) continue;  // NCCL decides the algorithm (or cannot be told)
      rows.push_back(
          CsvRow{CsvCollective(r.op), ranges[i], apply::AlgoName(a.forced.algo),
                 apply::ProtoName(a.forced.proto), a.forced.channels > 0 ? a.forced.channels : -1,
                 nodes, r.world_size > 0 ? r.world_size : -1, r.bytes, r.winner, a.name, a.reason});
    }
  }
  return rows;
}

std::string NcclTunerCsv(const std::vector<core::ResultRecord>& records,
                         const std::string& fingerprint, int nodes,
                         std::optional<core::Dtype> pinned, int channel_ceiling) {
  std::string out =
      "# ccltune winners for fingerprint " + fingerprint +
      ", in the format of NCCL's example tuner plugin (NCCL_TUNER_CONFIG_FILE).\n"
      "# What ccltune's plugin applies " +
      MinCtasSetting(channel_ceiling) +
      " (--min-ctas):\n# a winner naming ctas=N needs NCCL_MIN_CTAS >= N, else the fastest "
      "choice a tuner can\n# reproduce stands in for it (plugin/README.md).\n"
      "# Rows only for applied choices that force an algorithm and protocol; sizes nearest\n"
      "# to a bucket that NCCL decides (nccl, a ctas-only choice, or a non-NCCL winner) have "
      "no row.\n# Ranges split at geometric midpoints between tuned sizes.\n"
      "# Note: the example plugin sets 1 channel for calls no row matches.\n"
      "# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,"
      "numPipeOps,regBuff\n";
  for (const auto& row : NcclTunerRows(records, nodes, pinned, channel_ceiling)) {
    out += "# tuned " + std::to_string(row.tuned_bytes) + " B: " + row.reason + "\n";
    out += row.collective + "," + std::to_string(row.range.min_bytes) + "," +
           std::to_string(row.range.max_bytes) + "," + row.algorithm + "," + row.protocol + "," +
           std::to_string(row.channels) + "," + std::to_string(row.nodes) + "," +
           std::to_string(row.ranks) + ",-1,-1\n";
  }
  return out;
}

}  // namespace ccltune::worker::exporting

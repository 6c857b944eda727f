// Winners in the CSV format of NCCL's example tuner plugin (NVIDIA/nccl
// plugins/tuner/example, read from NCCL_TUNER_CONFIG_FILE):
//   collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff
// One row per tuned size whose *applied* choice (core/apply/applied_choice.h, for the channel
// ceiling given as --min-ctas) forces an algorithm and protocol: the rows are built from
// the plugin's own table (plugin_table.h), so they say what ccltune's plugin does under
// the same NCCL_MIN_CTAS. Byte ranges split at the geometric midpoints between tuned
// sizes, with the same tie rule as core::NearestLog2Bucket, so every size maps to the
// bucket ccltune's own plugin would use; sizes nearest to a bucket NCCL should decide get
// no row.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/results/result.h"

namespace ccltune::worker::exporting {

struct ByteRange {
  std::uint64_t min_bytes;
  std::uint64_t max_bytes;  // inclusive
};
// For ascending distinct sizes: [0 or split, split-1 or UINT64_MAX] each, covering all sizes.
std::vector<ByteRange> NearestBucketRanges(const std::vector<std::uint64_t>& sizes);

struct CsvRow {
  std::string collective;  // allreduce, allgather, reducescatter, broadcast
  ByteRange range;
  std::string algorithm, protocol;
  int channels = -1;  // -1: NCCL's default
  int nodes = -1, ranks = -1;
  std::uint64_t tuned_bytes = 0;  // the bucket (for the comment)
  std::string winner;
  std::string applied;  // the choice the row forces (the winner, or its substitute)
  std::string reason;   // why (applied_choice.h), for the comment
};

// `nodes`: from the fingerprint (-1 when unknown); ranks from each record's worldSize.
// `channel_ceiling`: the application's NCCL_MIN_CTAS, 0 when it does not set it.
std::vector<CsvRow> NcclTunerRows(const std::vector<core::ResultRecord>& records, int nodes,
                                  std::optional<core::Dtype> pinned, int channel_ceiling);
// The file: a comment header (fingerprint, column order, what is left out) and the rows.
std::string NcclTunerCsv(const std::vector<core::ResultRecord>& records,
                         const std::string& fingerprint, int nodes,
                         std::optional<core::Dtype> pinned, int channel_ceiling);

}  // namespace ccltune::worker::exporting

// The tuner plugin's own table (core/apply/winner_table.h) built from records `ccltune export`
// read from the cache: same slice per op, same size de-duplication, same applied-choice
// rule for a channel ceiling. Every export format that describes what the plugin does is
// written from this table, so the files cannot drift from the plugin.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "core/apply/winner_table.h"
#include "core/results/result.h"

namespace ccltune::worker::exporting {

// Records the plugin would reject (bytes == 0) are left out, as the plugin leaves them; so
// are records with an epilogue (issue 16): NCCL's tuner cannot fuse one, the plugin ignores
// them, and a fused time says nothing about the bare all-reduce of the same bytes.
// `channel_ceiling`: --min-ctas, the NCCL_MIN_CTAS the application runs with (0 = unset).
apply::WinnerTable PluginTable(const std::vector<core::ResultRecord>& records,
                               std::optional<core::Dtype> pinned, int channel_ceiling);

// How many of `records` carry an epilogue (what PluginTable leaves out for that reason), for
// the one note the exporters print.
std::size_t CountEpilogueRecords(const std::vector<core::ResultRecord>& records);

// A record of the host backend (`ccltune tune --backend host`): every measured choice is a
// host choice (ring, direct, ...; the default `ring` always among them), none NCCL's. Such a
// record has nothing NCCL's tuner could apply, whatever won; a record of the nccl backend
// always holds its default, `nccl`. False for a record without choices.
bool MeasuredOnHost(const core::ResultRecord& record);

// core::Op order (allReduce first) with each op's ncclFunc_t, for writers that list the
// table op by op; allToAll (no tuner call) is not listed.
std::vector<int> NcclFuncsInOpOrder();

}  // namespace ccltune::worker::exporting

// `ccltune export --format applied-json`: per tuned size of the plugin's table (one slice
// per op, plugin_table.h), the winner and what ccltune's plugin applies for it with
// NCCL_MIN_CTAS = --min-ctas (core/apply/applied_choice.h), with ccltune's measured time of
// the applied choice. For tables and checks (tests/plugin/run_plugin_on_device.sh); the
// plugin itself reads `--format json`.
//   {"minCtas": N, "sizes": [{"op", "dtype", "redop", "bytes", "winner", "applied",
//     "appliedTimeUs", "substituted", "algo", "proto", "channels", "reason"}, ...]}
// "applied" is "" (and appliedTimeUs null) where NCCL is left alone with nothing measured
// to compare with; algo/proto are null and channels 0 where they are not forced.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "core/results/result.h"

namespace ccltune::worker::exporting {

nlohmann::json AppliedJson(const std::vector<core::ResultRecord>& records,
                           std::optional<core::Dtype> pinned, int channel_ceiling);

}  // namespace ccltune::worker::exporting

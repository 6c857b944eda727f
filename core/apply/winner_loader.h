// Loads a communicator's winners from the configured source within a hard deadline: the
// work (file read and parse, or Redis) runs on a detached thread, and the caller stops
// waiting at the deadline whatever the thread is blocked on (DNS, a silent server, a huge
// file). The thread owns everything it touches, so it may finish after the caller left;
// the library is linked -z nodelete so its code outlives a dlclose.
#pragma once

#include <chrono>
#include <string>

#include "core/apply/plugin_config.h"
#include "core/apply/record_parser.h"
#include "core/base/status.h"

namespace ccltune::apply {

// NotFound when neither CCLTUNE_RESULTS_FILE nor CCLTUNE_REDIS_URL is set; Timeout when the
// deadline passed; otherwise the source's error or its records (only `fingerprint`'s).
core::Result<ParsedFile> LoadWinners(const PluginConfig& config, const std::string& fingerprint,
                                     std::chrono::steady_clock::time_point deadline);

}  // namespace ccltune::apply

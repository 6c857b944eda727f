// `ccltune export --results-file FILE`: one fingerprint's records from a JSON array of
// records (what `ccltune export --format json` wrote, the plugin's CCLTUNE_RESULTS_FILE)
// instead of the cache, so a kept export can be turned into the other formats (e.g. the
// plugin's applied choices for another --min-ctas) without the cache it came from.
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/results/result.h"

namespace ccltune::worker::exporting {

struct FileRecords {
  std::string fingerprint;
  std::vector<core::ResultRecord> records;  // only that fingerprint's
};

// Blocks on the file read. Errors name the file and, for a bad record, its index; the
// fingerprint is chosen as from the cache (PickFingerprintAmong).
core::Result<FileRecords> ReadRecordsFile(const std::string& path, const std::string& wanted);

}  // namespace ccltune::worker::exporting

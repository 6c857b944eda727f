// Why a communicator found no winners while the cache holds some (issue 43): of the cached
// fingerprints, the one whose inputs differ from this communicator's in the fewest fields, and
// those fields, so that the one log line says "tuned with NCCL 2.28.3, this process loads
// 2.28.9" instead of two hashes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace ccltune::core {

// `mine`: this communicator's fingerprint inputs (FingerprintJson); `cached`: fingerprint ->
// its inputs, as the cache stores them (ccltune:v1:fp:{fp}; unreadable ones are skipped).
// "" when `cached` has none readable. Otherwise, e.g.
// "the cache's closest fingerprint 5bd942b27c3a99ac (of 2) was tuned with ncclVersion 2.28.3
// where this process has 2.28.9".
std::string DescribeFingerprintGap(const nlohmann::json& mine,
                                   const std::vector<std::pair<std::string, std::string>>& cached);

}  // namespace ccltune::core

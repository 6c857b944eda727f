// Turns the attempt summary rank 0 writes to Redis (JobKeys::Summary(): fingerprint,
// presync {waitMs, skewMs}, problems, published, records [ResultRecord JSON]) into the
// job's status fields: fingerprint, preSync, results {problems, published, speedupGeomean,
// nodes, gpusPerNode (the fingerprint's: distinct nodes the ranks' pods landed on),
// ncclTopology (nccl backend: what NCCL's log says it formed), winners (at most kMaxWinners;
// a winner of an epilogue problem carries "epilogue", its Label())}.
#pragma once

#include <nlohmann/json.hpp>

#include "core/base/status.h"

namespace ccltune::controller {

inline constexpr size_t kMaxWinners = 64;

// DataLoss naming the bad record when a record does not parse.
core::Status FillResults(nlohmann::json& status, const nlohmann::json& summary);

}  // namespace ccltune::controller

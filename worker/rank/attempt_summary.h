// The attempt summary rank 0 writes after a successful run (Redis key JobKeys::Summary, and
// --report FILE): what the launcher prints and what the controller copies into status.
// Schema (JSON): {schema:1, jobId, attempt, backend, worldSize, fingerprint, fingerprintInfo,
//   presync:{waitMs (max over ranks), waitMsMedian, skewMs}, barrier:{medianUs, maxUs},
//   timing:{commSetupS, presyncS, barriersS, timedRunsS, warmupVerifyS (= prepareS + warmupS
//   + verifyS), prepareS, warmupS, verifyS, tuningS, wallS, screeningS, fullS}, search ("adaptive" | "exhaustive"), screening:{screened, pruned},
//   problems, published, records:[ResultRecord JSON], unresolved:[problem keys]}
// screeningS + fullS is the time spent measuring choices (rank 0): screening phases, and full
// measurements (after screening, or unscreened).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/result.h"

namespace ccltune::worker {

inline constexpr int kSummarySchema = 1;

// Per-rank statistics gathered at the end (one JSON object per rank).
struct RankStats {
  double presync_wait_s = 0;
  double presync_skew_s = 0;
  std::vector<double> barrier_s;  // each round's barrier on this rank
  nlohmann::json ToJson() const;
  static RankStats FromJson(const nlohmann::json& j);
};

nlohmann::json PresyncAndBarrierJson(const std::vector<RankStats>& ranks);

}  // namespace ccltune::worker

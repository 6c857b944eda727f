// The attempt summary rank 0 writes after a successful run (Redis key JobKeys::Summary, and
// --report FILE): what the launcher prints and what the controller copies into status.
// Schema (JSON): {schema:1, jobId, attempt, backend, worldSize, fingerprint, fingerprintInfo,
//   presync:{waitMs (max over ranks), waitMsMedian, skewMs}, barrier:{medianUs, maxUs},
//   timing:{commSetupS, presyncS, barriersS, timedRunsS, warmupVerifyS (= prepareS + warmupS
//   + verifyS), prepareS, warmupS, verifyS, tuningS, wallS, screeningS, fullS}, search ("adaptive"
//   | "exhaustive"), screening:{screened, pruned}, problems, published, records:[ResultRecord
//   JSON], unresolved:[problem keys], nodeOfRank:[node name by rank], ncclTopology?:{nNodes:[…],
//   intraNode:[…], interNode:[…]} | {problem} (nccl backend: what NCCL's own log says,
//   NcclTopologyJson)}
// screeningS + fullS is the time spent measuring choices (rank 0): screening phases, and full
// measurements (after screening, or unscreened).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/results/result.h"

namespace ccltune::worker {

inline constexpr int kSummarySchema = 1;

// Per-rank statistics gathered at the end (one JSON object per rank).
struct RankStats {
  double presync_wait_s = 0;
  double presync_skew_s = 0;
  std::vector<double> barrier_s;  // each round's barrier on this rank
  // What NCCL logged on this rank (core::NcclInitLog JSON), or why nothing: nccl backend only.
  nlohmann::json nccl_log;
  std::string nccl_log_problem;
  nlohmann::json ToJson() const;
  static RankStats FromJson(const nlohmann::json& j);
};

nlohmann::json PresyncAndBarrierJson(const std::vector<RankStats>& ranks);

// The summary's "ncclTopology": {nNodes, intraNode, interNode} from every rank's NCCL log,
// links judged by `node_of_rank`; {problem} when a rank has no log; null when no rank ran
// NCCL (the host backend).
nlohmann::json NcclTopologyJson(const std::vector<RankStats>& ranks,
                                const std::vector<std::string>& node_of_rank);

}  // namespace ccltune::worker

#include "worker/rank/attempt_summary.h"

#include <algorithm>
#include <cmath>

#include "core/base/median.h"
#include "core/node/nccl_init_log.h"

namespace ccltune::worker {
nlohmann::json RankStats::ToJson() const {
  nlohmann::json j{
      {"presyncWaitS", presync_wait_s}, {"presyncSkewS", presync_skew_s}, {"barrierS", barrier_s}};
  if (!nccl_log.is_null()) j["ncclLog"] = nccl_log;
  if (!nccl_log_problem.empty()) j["ncclLogProblem"] = nccl_log_problem;
  return j;
}

RankStats RankStats::FromJson(const nlohmann::json& j) {
  RankStats s;
  s.presync_wait_s = j.value("presyncWaitS", 0.0);
  s.presync_skew_s = j.value("presyncSkewS", 0.0);
  s.barrier_s = j.value("barrierS", std::vector<double>{});
  s.nccl_log = j.value("ncclLog", nlohmann::json());
  s.nccl_log_problem = j.value("ncclLogProblem", "");
  return s;
}

nlohmann::json NcclTopologyJson(const std::vector<RankStats>& ranks,
                                const std::vector<std::string>& node_of_rank) {
  core::NcclInitLog merged;
  bool any = false;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (!ranks[r].nccl_log_problem.empty()) {
      return {{"problem", "rank " + std::to_string(r) + ": " + ranks[r].nccl_log_problem}};
    }
    if (ranks[r].nccl_log.is_null()) continue;
    merged.Merge(core::NcclInitLog::FromJson(ranks[r].nccl_log));
    any = true;
  }
  if (!any) return nullptr;
  return core::ClassifyLinks(merged, node_of_rank).ToJson();
}

namespace {

// Three decimals: ms to the microsecond of Redis TIME, us to the nanosecond of the clocks.
// The summary is what a job's status shows (preSync.waitMs), so no 16-digit float there.
double Thousandths(double v) { return std::round(v * 1e3) / 1e3; }

}  // namespace

nlohmann::json PresyncAndBarrierJson(const std::vector<RankStats>& ranks) {
  std::vector<double> waits, barriers;
  double skew = 0;
  for (const auto& r : ranks) {
    waits.push_back(r.presync_wait_s);
    skew = std::max(skew, r.presync_skew_s);
    barriers.insert(barriers.end(), r.barrier_s.begin(), r.barrier_s.end());
  }
  const double max_wait = waits.empty() ? 0 : *std::max_element(waits.begin(), waits.end());
  const double max_barrier =
      barriers.empty() ? 0 : *std::max_element(barriers.begin(), barriers.end());
  return {{"presync",
           {{"waitMs", Thousandths(max_wait * 1e3)},
            {"waitMsMedian", Thousandths(core::Median(waits) * 1e3)},
            {"skewMs", Thousandths(skew * 1e3)}}},
          {"barrier",
           {{"medianUs", Thousandths(core::Median(barriers) * 1e6)},
            {"maxUs", Thousandths(max_barrier * 1e6)},
            {"count", barriers.size()}}}};
}

}  // namespace ccltune::worker

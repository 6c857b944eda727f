#include "worker/rank/attempt_summary.h"

#include <algorithm>

namespace ccltune::worker {
namespace {
double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
}  // namespace

nlohmann::json RankStats::ToJson() const {
  return {
      {"presyncWaitS", presync_wait_s}, {"presyncSkewS", presync_skew_s}, {"barrierS", barrier_s}};
}

RankStats RankStats::FromJson(const nlohmann::json& j) {
  RankStats s;
  s.presync_wait_s = j.value("presyncWaitS", 0.0);
  s.presync_skew_s = j.value("presyncSkewS", 0.0);
  s.barrier_s = j.value("barrierS", std::vector<double>{});
  return s;
}

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
  return {
      {"presync",
       {{"waitMs", max_wait * 1e3}, {"waitMsMedian", Median(waits) * 1e3}, {"skewMs", skew * 1e3}}},
      {"barrier",
       {{"medianUs", Median(barriers) * 1e6},
        {"maxUs", max_barrier * 1e6},
        {"count", barriers.size()}}}};
}

}  // namespace ccltune::worker

// The adaptive search's screening and pruning rule (screening.h).
#include "core/search/screening.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/results/result.h"  // IssueCostQualifies

namespace ccltune::core {
namespace {

// Two rounds, so one disturbed round (another process took the core) cannot drop a choice.
constexpr int kMaxScreeningRounds = 2;

std::string Us(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f us", us);
  return buf;
}

}  // namespace

int ScreeningRounds(int rounds) { return std::clamp(rounds - 1, 0, kMaxScreeningRounds); }

ScreeningPlan PlanScreening(int rounds, int iters, double expected_op_us) {
  ScreeningPlan plan;
  plan.rounds = ScreeningRounds(rounds);
  plan.iters = iters;
  const int short_iters = iters / 4;
  if (plan.rounds > 0 && short_iters >= kMinShortScreeningIters &&
      expected_op_us >= kShortScreeningMinOpUs) {
    plan.iters = short_iters;
    plan.short_rounds = true;
  }
  return plan;
}

BufferReach ReachAsReference(BufferReach reach, std::optional<double> host_us,
                             std::optional<double> default_host_us,
                             double noise_threshold_percent) {
  if (reach != BufferReach::kAny ||
      IssueCostQualifies(host_us, default_host_us, noise_threshold_percent)) {
    return reach;
  }
  return BufferReach::kRegistered;
}

ScreeningVerdict JudgeScreening(const std::vector<double>& screening_us,
                                const std::vector<Reference>& references,
                                double noise_threshold_percent, BufferReach reach) {
  const Reference* best = nullptr;
  for (const auto& r : references) {
    if (r.reach < reach) continue;  // a choice that reaches less far cannot judge it
    if (std::isfinite(r.max_us) && r.max_us > 0 && (best == nullptr || r.max_us < best->max_us))
      best = &r;
  }
  if (best == nullptr || screening_us.empty()) return {};
  // A round that did not measure (NaN, infinite) is no evidence either way: keep the choice.
  if (!std::all_of(screening_us.begin(), screening_us.end(),
                   [](double us) { return std::isfinite(us); })) {
    return {};
  }
  const double fastest = *std::min_element(screening_us.begin(), screening_us.end());
  const double factor = 1.0 + noise_threshold_percent / 100.0;
  if (fastest <= factor * best->max_us) return {};
  char factor_text[16];
  std::snprintf(factor_text, sizeof factor_text, "%.3g", factor);
  return {true, "screening: fastest of " + std::to_string(screening_us.size()) + " rounds " +
                    Us(fastest) + " > " + factor_text + " x " + Us(best->max_us) +
                    ", the slowest round of " + best->name};
}

}  // namespace ccltune::core

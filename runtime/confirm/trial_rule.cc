// The in-program trial's rule (trial_rule.h).
#include "runtime/confirm/trial_rule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace ccltune::runtime {
namespace {

std::string Us(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f us", us);
  return buf;
}

}  // namespace

std::optional<TrialSide> TrialSideOf(int k, int per_side) {
  if (k < 0 || k >= 2 * per_side) return std::nullopt;
  return k % 2 == 0 ? TrialSide::kChoice : TrialSide::kNccl;
}

TrialVerdict JudgeTrial(std::string_view choice,
                        const std::vector<std::pair<double, double>>& medians_by_rank, int per_side,
                        double noise_threshold_percent) {
  TrialVerdict v;
  for (const auto& [c, n] : medians_by_rank) {
    v.choice_us = std::max(v.choice_us, c);
    v.nccl_us = std::max(v.nccl_us, n);
  }
  // The winner rule (core::PickWinner): NCCL's own stays unless beaten by more than the noise.
  v.keep = v.choice_us < v.nccl_us * (1 - noise_threshold_percent / 100);
  v.line = std::string(choice) + " " + Us(v.choice_us) +
           " a call in this program against NCCL's own " + Us(v.nccl_us) + " (median of " +
           std::to_string(per_side) + " calls each, max of " +
           std::to_string(medians_by_rank.size()) +
           " ranks): " + (v.keep ? "kept" : "NCCL's own from now on");
  return v;
}

std::string EncodeMedians(double choice_us, double nccl_us) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g %.17g", choice_us, nccl_us);
  return buf;
}

core::Result<std::pair<double, double>> DecodeMedians(std::string_view text) {
  std::istringstream in{std::string(text)};
  double c = 0, n = 0;
  std::string rest;
  if (!(in >> c >> n) || (in >> rest) || !std::isfinite(c) || !std::isfinite(n) || c <= 0 ||
      n <= 0) {
    return core::DataLoss("trial medians '" + std::string(text) +
                          "': expected two positive numbers (choice us, NCCL us)");
  }
  return std::make_pair(c, n);
}

}  // namespace ccltune::runtime

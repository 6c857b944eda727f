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

// Below `than` by more than the threshold (the winner rule, core::PickWinner).
bool Beats(double us, double than, double noise_threshold_percent) {
  return us < than * (1 - noise_threshold_percent / 100);
}

}  // namespace

std::optional<int> TrialArmOf(int k, int per_arm, int candidates) {
  const int arms = candidates + 1;
  if (k < 0 || candidates < 1 || per_arm < 1 || k >= arms * (per_arm + 1)) return std::nullopt;
  return k % arms;
}

bool TrialCallTimed(int k, int candidates) { return k >= candidates + 1; }

TrialVerdict JudgeTrial(const std::vector<std::string>& candidates,
                        const std::vector<std::vector<double>>& medians_by_rank, int per_arm,
                        double noise_threshold_percent) {
  TrialVerdict v;
  v.us.assign(candidates.size() + 1, 0);
  for (const std::vector<double>& m : medians_by_rank)
    for (std::size_t a = 0; a < v.us.size() && a < m.size(); ++a) v.us[a] = std::max(v.us[a], m[a]);
  const double nccl_us = v.us.back();
  // The table's choice unless its runner-up beats it by more than the noise.
  int best = 0;
  for (int a = 1; a < static_cast<int>(candidates.size()); ++a)
    if (Beats(v.us[a], v.us[best], noise_threshold_percent)) best = a;
  v.pick = Beats(v.us[best], nccl_us, noise_threshold_percent) ? best : -1;
  std::string times;
  for (std::size_t a = 0; a < candidates.size(); ++a)
    times += (a == 0 ? "" : ", ") + candidates[a] + " " + Us(v.us[a]);
  v.line = times + " a call in this program against NCCL's own " + Us(nccl_us) + " (median of " +
           std::to_string(per_arm) + " calls each, max of " +
           std::to_string(medians_by_rank.size()) + " ranks): " +
           (v.pick == 0  ? "kept"
            : v.pick > 0 ? candidates[v.pick] + " from now on"
                         : "NCCL's own from now on");
  return v;
}

std::string EncodeMedians(const std::vector<double>& us) {
  std::string out;
  for (double x : us) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    out += (out.empty() ? "" : " ") + std::string(buf);
  }
  return out;
}

core::Result<std::vector<double>> DecodeMedians(std::string_view text, std::size_t arms) {
  std::istringstream in{std::string(text)};
  std::vector<double> us(arms);
  bool ok = arms > 0;
  for (double& x : us) ok = ok && (in >> x) && std::isfinite(x) && x > 0;
  std::string rest;
  if (!ok || (in >> rest)) {
    return core::DataLoss("trial medians '" + std::string(text) + "': expected " +
                          std::to_string(arms) + " positive numbers (us per arm, NCCL's own last)");
  }
  return us;
}

}  // namespace ccltune::runtime

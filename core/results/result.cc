// Choice statuses and the winner rule of docs/design.md §2.6.
#include "core/results/result.h"

#include <cmath>

namespace ccltune::core {
namespace {

bool Valid(const ChoiceResult& c) {
  return c.status == ChoiceStatus::kOk && std::isfinite(c.time_us) && c.time_us > 0;
}

std::string WhyNothingValid(const ResultRecord& r) {
  std::string out;
  for (const auto& c : r.choices) {
    out += (out.empty() ? "" : "; ") + c.name + " " + ChoiceStatusName(c.status);
    if (!c.reason.empty()) out += " (" + c.reason + ")";
  }
  return out.empty() ? "no choices were measured" : out;
}

void SetWinner(ResultRecord& r, const ChoiceResult& w) {
  r.winner = w.name;
  r.winner_params = w.params;
  r.time_us = w.time_us;
  r.busbw_gbs = w.busbw_gbs;
}

}  // namespace

const char* ChoiceStatusName(ChoiceStatus s) {
  switch (s) {
    case ChoiceStatus::kOk:
      return "ok";
    case ChoiceStatus::kWrong:
      return "wrong";
    case ChoiceStatus::kTimeout:
      return "timeout";
    case ChoiceStatus::kFailed:
      return "failed";
    case ChoiceStatus::kSkipped:
      return "skipped";
    case ChoiceStatus::kPruned:
      return "pruned";
  }
  return "?";
}

Result<ChoiceStatus> ParseChoiceStatus(std::string_view s) {
  for (ChoiceStatus c : {ChoiceStatus::kOk, ChoiceStatus::kWrong, ChoiceStatus::kTimeout,
                         ChoiceStatus::kFailed, ChoiceStatus::kSkipped, ChoiceStatus::kPruned}) {
    if (s == ChoiceStatusName(c)) return c;
  }
  return InvalidArgument("'" + std::string(s) +
                         "' is not a choice status (allowed: ok, wrong, timeout, failed, "
                         "skipped, pruned)");
}

std::string ResultRecord::Key() const { return ProblemKey(op, dtype, redop, bytes, epilogue); }

std::string ResultRecord::Group() const {
  std::string g = std::string(OpName(op)) + " " + DtypeName(dtype) + " " + RedOpName(redop);
  if (!epilogue.none()) {
    g += std::string(" + ") + EpilogueKindName(epilogue.kind) +
         " hidden=" + std::to_string(epilogue.hidden);
  }
  return g;
}

// Ties: the default wins any tie with it (a challenger must be strictly faster by more than
// the threshold); among other choices the earlier one in `choices` (catalog order) wins.
Status PickWinner(ResultRecord& record, const std::string& default_choice,
                  double noise_threshold_percent) {
  const ChoiceResult* fastest = nullptr;
  const ChoiceResult* def = nullptr;
  for (const auto& c : record.choices) {
    if (c.name == default_choice) def = &c;
    if (Valid(c) && (fastest == nullptr || c.time_us < fastest->time_us)) fastest = &c;
  }
  if (fastest == nullptr) {
    return FailedPrecondition("no valid choice for " + record.Key() + ": " +
                              WhyNothingValid(record));
  }
  if (def == nullptr || !Valid(*def)) {
    // The default has no valid time, so a speedup against it would be x/NaN. Record 0
    // ("unknown") instead of a made-up number; defaultTimeUs 0 says the same.
    SetWinner(record, *fastest);
    record.default_time_us = 0;
    record.speedup_vs_default = 0;
    return Status::Ok();
  }
  const double limit = def->time_us * (1.0 - noise_threshold_percent / 100.0);
  SetWinner(record, fastest->time_us < limit ? *fastest : *def);
  record.default_time_us = def->time_us;
  record.speedup_vs_default = def->time_us / record.time_us;
  return Status::Ok();
}

}  // namespace ccltune::core

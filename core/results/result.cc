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

// The fastest valid choice `eligible` accepts (every one when it is empty); the earlier in
// `choices` on a tie.
const ChoiceResult* FastestValid(const ResultRecord& r, const AnyBufferTest& eligible) {
  const ChoiceResult* fastest = nullptr;
  for (const auto& c : r.choices) {
    if (eligible && !eligible(c.name)) continue;
    if (Valid(c) && (fastest == nullptr || c.time_us < fastest->time_us)) fastest = &c;
  }
  return fastest;
}

// The choice named `name` when it measured a valid time; else nullptr.
const ChoiceResult* ValidChoice(const ResultRecord& r, const std::string& name) {
  for (const auto& c : r.choices)
    if (c.name == name) return Valid(c) ? &c : nullptr;
  return nullptr;
}

// Whether `challenger` beats the default by more than the noise threshold.
bool Beats(const ChoiceResult& challenger, const ChoiceResult& def, double noise_percent) {
  return challenger.time_us < def.time_us * (1.0 - noise_percent / 100.0);
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
  const ChoiceResult* fastest = FastestValid(record, nullptr);
  if (fastest == nullptr) {
    return FailedPrecondition("no valid choice for " + record.Key() + ": " +
                              WhyNothingValid(record));
  }
  const ChoiceResult* def = ValidChoice(record, default_choice);
  if (def == nullptr) {
    // The default has no valid time, so a speedup against it would be x/NaN. Record 0
    // ("unknown") instead of a made-up number; defaultTimeUs 0 says the same.
    SetWinner(record, *fastest);
    record.default_time_us = 0;
    record.speedup_vs_default = 0;
    return Status::Ok();
  }
  SetWinner(record, Beats(*fastest, *def, noise_threshold_percent) ? *fastest : *def);
  record.default_time_us = def->time_us;
  record.speedup_vs_default = def->time_us / record.time_us;
  return Status::Ok();
}

bool IssueCostQualifies(std::optional<double> host_us, std::optional<double> default_host_us,
                        double noise_threshold_percent) {
  if (!default_host_us) return true;
  return host_us && *host_us <= *default_host_us * (1 + noise_threshold_percent / 100);
}

void PickAnyBuffer(ResultRecord& record, const std::string& default_choice,
                   double noise_threshold_percent, const AnyBufferTest& runs_on_any_buffer) {
  record.any_buffer.reset();
  const ChoiceResult* def = ValidChoice(record, default_choice);
  const AnyBufferTest qualifies = [&](const std::string& name) {
    const ChoiceResult* c = runs_on_any_buffer(name) ? ValidChoice(record, name) : nullptr;
    return c != nullptr && IssueCostQualifies(c->host_us, def ? def->host_us : std::nullopt,
                                              noise_threshold_percent);
  };
  const ChoiceResult* pick = nullptr;
  if (!record.winner.empty() && qualifies(record.winner)) {
    pick = ValidChoice(record, record.winner);
  } else {
    pick = FastestValid(record, qualifies);
    if (pick != nullptr && def != nullptr && runs_on_any_buffer(def->name) &&
        !Beats(*pick, *def, noise_threshold_percent)) {
      pick = def;
    }
  }
  if (pick == nullptr) return;
  record.any_buffer =
      AnyBufferChoice{pick->name, pick->time_us, def != nullptr ? def->time_us / pick->time_us : 0};
}

}  // namespace ccltune::core

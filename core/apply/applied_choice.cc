// The winner → applied-choice rule (applied_choice.h).
#include "core/apply/applied_choice.h"

#include <charconv>
#include <cstdio>
#include <optional>

#include "core/apply/any_buffer.h"

namespace ccltune::apply {
namespace {

bool Reproducible(const ForcedChoice& f, int channel_ceiling) {
  return f.channels == 0 || f.channels <= channel_ceiling;
}

const MeasuredChoice* Find(const WinnerRecord& r, const std::string& name) {
  for (const auto& c : r.choices)
    if (c.name == name) return &c;
  return nullptr;
}

std::string Us(double us) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f us", us);
  return buf;
}

std::string Threshold() {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g%%", kNoiseThresholdPercent);
  return buf;
}

AppliedChoice Apply(const MeasuredChoice& c, std::string reason, bool substituted) {
  return AppliedChoice{c.forced, c.name, c.time_us, std::move(reason), substituted};
}

AppliedChoice AsMeasured(const WinnerRecord& r) {
  AppliedChoice out{r.forced, r.winner, 0, "", false};
  if (const MeasuredChoice* c = Find(r, r.winner)) out.time_us = c->time_us;
  out.reason = r.forced.forces_anything() ? "winner " + r.winner + " applied"
                                          : "winner nccl: NCCL's own choice, nothing forced";
  return out;
}

std::string NeedsChannels(const WinnerRecord& r, int channel_ceiling) {
  const std::string n = std::to_string(r.forced.channels);
  std::string out = "winner " + r.winner + " needs >= " + n + " channels (";
  if (channel_ceiling > 0)
    out += "NCCL_MIN_CTAS=" + std::to_string(channel_ceiling) + " guarantees only " +
           std::to_string(channel_ceiling) + "; ";
  return out + "set NCCL_MIN_CTAS=" + n + ")";
}

// The winner asks for more channels than the communicator is known to have.
AppliedChoice Substitute(const WinnerRecord& r, int channel_ceiling) {
  const std::string why = NeedsChannels(r, channel_ceiling);
  // `nccl` (forces nothing) and the choices the ceiling lets a tuner reproduce.
  std::vector<TimedChoice> reproducible;
  for (const auto& c : r.choices) {
    if (c.name == "nccl" || Reproducible(c.forced, channel_ceiling))
      reproducible.push_back({c.name, c.time_us});
  }
  const RuleOutcome o = FastestRunnable(
      reproducible, [](const std::string&) { return std::string(); }, "reproducible");
  if (!o.found)
    return AppliedChoice{
        {}, "", 0, why + "; forcing nothing: the record has no usable nccl time", true};
  return Apply(*Find(r, o.name), why + "; " + o.reason, true);
}

}  // namespace

RuleOutcome FastestRunnable(const std::vector<TimedChoice>& measured,
                            const std::function<std::string(const std::string&)>& why_not,
                            std::string_view runner_up_kind) {
  RuleOutcome out;
  const TimedChoice* nccl = nullptr;
  const TimedChoice* best = nullptr;  // ties go to the earlier one (catalog order)
  for (const auto& c : measured) {
    if (c.name == "nccl") {
      if (nccl == nullptr) nccl = &c;
    } else if ((best == nullptr || c.time_us < best->time_us) && why_not(c.name).empty()) {
      best = &c;
    }
  }
  if (nccl == nullptr) return out;
  out.found = true;
  const double limit = nccl->time_us * (1.0 - kNoiseThresholdPercent / 100.0);
  if (best != nullptr && best->time_us < limit) {
    out.name = best->name;
    out.time_us = best->time_us;
    out.reason =
        "applying " + best->name + " (" + Us(best->time_us) + " vs nccl " + Us(nccl->time_us) + ")";
    return out;
  }
  const std::string runner_up =
      best == nullptr
          ? "no other " + std::string(runner_up_kind) + " choice was measured"
          : best->name + " " + Us(best->time_us) + " is not faster by more than " + Threshold();
  out.name = "nccl";
  out.time_us = nccl->time_us;
  out.reason = "applying nccl (" + Us(nccl->time_us) + "; " + runner_up + ")";
  return out;
}

std::string WhyNotToIssue(const std::vector<TimedChoice>& measured, const std::string& name) {
  const auto host_of = [&](const std::string& n) -> std::optional<double> {
    for (const auto& c : measured)
      if (c.name == n) return c.host_us;
    return std::nullopt;
  };
  const std::optional<double> nccl = host_of("nccl");
  if (!nccl) return "";  // a graph tune's record: the GPU's rule alone
  if (auto parsed = core::ParseChoice(name, "nccl"); parsed.ok()) {
    if (auto spec = SpecFromChoice(*parsed); spec.ok()) {
      if (std::string why = WhyNotEager(*spec); !why.empty()) return why;
    }
  }
  const std::optional<double> mine = host_of(name);
  if (core::IssueCostQualifies(mine, nccl, kNoiseThresholdPercent)) return "";
  return "dearer to issue than nccl eager (" + (mine ? Us(*mine) : std::string("unmeasured")) +
         " vs " + Us(*nccl) + " of host time a call)";
}

AppliedChoice ApplyChoice(const WinnerRecord& record, int channel_ceiling) {
  if (!record.nccl_internal)
    return AppliedChoice{{}, "", 0, record.not_forced_reason + "; NCCL's own choice", false};
  if (Reproducible(record.forced, channel_ceiling)) return AsMeasured(record);
  return Substitute(record, channel_ceiling);
}

core::Result<int> ParseChannelCeiling(std::string_view value) {
  int n = 0;
  const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (value.empty() || ec != std::errc() || p != value.data() + value.size() || n < 0)
    return core::InvalidArgument("'" + std::string(value) +
                                 "' is not a channel count: allowed are 0 (unknown) or a "
                                 "positive integer");
  return n;
}

}  // namespace ccltune::apply

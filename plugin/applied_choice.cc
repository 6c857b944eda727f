// The winner → applied-choice rule (applied_choice.h).
#include "plugin/applied_choice.h"

#include <charconv>
#include <cstdio>

namespace ccltune::plugin {
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

// Fastest measured choice other than `nccl` that the tuner can reproduce; ties go to the
// earlier one in the record (catalog order), as in core::PickWinner.
const MeasuredChoice* FastestReproducible(const WinnerRecord& r, int channel_ceiling) {
  const MeasuredChoice* best = nullptr;
  for (const auto& c : r.choices) {
    if (c.name == "nccl" || !Reproducible(c.forced, channel_ceiling)) continue;
    if (best == nullptr || c.time_us < best->time_us) best = &c;
  }
  return best;
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
  const MeasuredChoice* nccl = Find(r, "nccl");
  if (nccl == nullptr)
    return AppliedChoice{
        {}, "", 0, why + "; forcing nothing: the record has no usable nccl time", true};
  const MeasuredChoice* best = FastestReproducible(r, channel_ceiling);
  const double limit = nccl->time_us * (1.0 - kNoiseThresholdPercent / 100.0);
  if (best != nullptr && best->time_us < limit)
    return Apply(*best,
                 why + "; applying " + best->name + " (" + Us(best->time_us) + " vs nccl " +
                     Us(nccl->time_us) + ")",
                 true);
  const std::string runner_up = best == nullptr ? "no other reproducible choice was measured"
                                                : best->name + " " + Us(best->time_us) +
                                                      " is not faster by more than " + Threshold();
  return Apply(*nccl, why + "; applying nccl (" + Us(nccl->time_us) + "; " + runner_up + ")", true);
}

}  // namespace

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

}  // namespace ccltune::plugin

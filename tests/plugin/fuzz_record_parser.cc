// libFuzzer target: any bytes as a cache value or a results file must give a record or an
// error (never a crash, a throw, a hang or a sanitizer report), and whatever parses must
// keep the invariants the plugin relies on when it indexes NCCL's cost table, for the
// winner and for whatever choice the plugin applies in its place (applied_choice.h).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

#include "core/apply/applied_choice.h"
#include "core/apply/record_parser.h"
#include "core/apply/tuner_abi.h"
#include "core/apply/winner_table.h"

namespace {

namespace abi = ccltune::apply::abi;
namespace apply = ccltune::apply;

void CheckForced(const apply::ForcedChoice& f) {
  const bool algo_ok = f.algo == -1 || f.algo == abi::kAlgoTree || f.algo == abi::kAlgoRing;
  const bool proto_ok = (f.algo == -1 && f.proto == -1) ||
                        (f.algo >= 0 && f.proto >= 0 && f.proto < abi::kNumProtocols);
  if (!algo_ok || !proto_ok || f.channels < 0 || f.channels > 64) __builtin_trap();
}

// What the plugin applies never asks for more channels than the ceiling allows, and only
// names a measured choice with a usable time.
void CheckApplied(const apply::AppliedChoice& a, int ceiling) {
  CheckForced(a.forced);
  if (a.forced.channels > ceiling) __builtin_trap();
  if (a.name.empty() && a.forced.forces_anything()) __builtin_trap();
  if (!std::isfinite(a.time_us) || a.time_us < 0) __builtin_trap();
}

void CheckRecord(const apply::WinnerRecord& r) {
  if (r.bytes == 0 || r.choices.size() > apply::kMaxKeptChoices) __builtin_trap();
  if (r.nccl_internal) CheckForced(r.forced);
  for (const auto& c : r.choices) {
    if (!std::isfinite(c.time_us) || c.time_us <= 0) __builtin_trap();
    CheckForced(c.forced);
  }
  for (int ceiling : {0, 8, 64}) CheckApplied(apply::ApplyChoice(r, ceiling), ceiling);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto rec = apply::ParseWinnerRecord(text); rec.ok()) CheckRecord(*rec);
  auto file = apply::ParseResultsFile(text);
  if (!file.ok()) return 0;
  if (file->records.size() > apply::kMaxRecords) __builtin_trap();
  const auto table = apply::WinnerTable::Build(file->records, std::nullopt, 0);
  for (int f = -1; f <= abi::kNumFuncs; ++f) {
    for (std::uint64_t b : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{4096},
                            std::uint64_t{1} << 30, std::numeric_limits<std::uint64_t>::max()}) {
      if (const auto* e = table.Lookup(f, b)) {
        CheckRecord(e->record);
        CheckApplied(e->applied, 0);
      }
    }
  }
  return 0;
}

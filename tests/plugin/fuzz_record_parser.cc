// libFuzzer target: any bytes as a cache value or a results file must give a record or an
// error (never a crash, a throw, a hang or a sanitizer report), and whatever parses must
// keep the invariants the plugin relies on when it indexes NCCL's cost table.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

#include "plugin/record_parser.h"
#include "plugin/tuner_abi.h"
#include "plugin/winner_table.h"

namespace {

namespace abi = ccltune::plugin::abi;

void CheckForced(const ccltune::plugin::WinnerRecord& r) {
  if (!r.nccl_internal) return;
  const auto& f = r.forced;
  const bool algo_ok = f.algo == -1 || f.algo == abi::kAlgoTree || f.algo == abi::kAlgoRing;
  const bool proto_ok = (f.algo == -1 && f.proto == -1) ||
                        (f.algo >= 0 && f.proto >= 0 && f.proto < abi::kNumProtocols);
  if (!algo_ok || !proto_ok || f.channels < 0 || f.channels > 64) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto rec = ccltune::plugin::ParseWinnerRecord(text); rec.ok()) {
    if (rec->bytes == 0) __builtin_trap();
    CheckForced(*rec);
  }
  auto file = ccltune::plugin::ParseResultsFile(text);
  if (!file.ok()) return 0;
  if (file->records.size() > ccltune::plugin::kMaxRecords) __builtin_trap();
  const auto table = ccltune::plugin::WinnerTable::Build(file->records, std::nullopt);
  for (int f = -1; f <= abi::kNumFuncs; ++f) {
    for (std::uint64_t b : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{4096},
                            std::uint64_t{1} << 30, std::numeric_limits<std::uint64_t>::max()}) {
      if (const auto* r = table.Lookup(f, b)) CheckForced(*r);
    }
  }
  return 0;
}

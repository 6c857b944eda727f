// The plugin's reader of published records (a Redis value, or the array file that
// `ccltune export --format json` writes). Input is untrusted: whatever bytes the cache or
// file hold must give a record or an error, never a crash, a throw or unbounded work
// (fuzzed: tests/plugin/fuzz_record_parser.cc). The record schema itself is core's
// (core::ResultFromJson); this adds size and nesting bounds, the winner's meaning, and the
// measured choices a tuner could apply instead of the winner (applied_choice.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/apply/forced_choice.h"
#include "core/base/status.h"
#include "core/plan/epilogue.h"
#include "core/plan/types.h"
#include "core/results/result.h"

namespace ccltune::apply {

inline constexpr std::size_t kMaxRecordBytes = 256 * 1024;     // one record
inline constexpr std::size_t kMaxResultsFileBytes = 64 << 20;  // the whole file
inline constexpr std::size_t kMaxRecords = 4096;               // per communicator
inline constexpr int kMaxJsonDepth = 32;  // records nest 4 deep; bounds parser recursion
// Measured choices kept per record. The catalog has about 450 names a tuner can apply
// (nccl, 6 algo/proto pairs, each with or without ctas=1..64), so real records stay far
// below; the cap bounds memory and init work for a hostile cache (4096 records x 512).
inline constexpr std::size_t kMaxKeptChoices = 512;

// One measured choice that a tuner could apply: status ok, a finite time > 0, and a name
// that is NCCL-internal (ForcedChoiceFromWinner accepts it). Parsed once here, on the
// loader thread, so init only compares numbers.
struct MeasuredChoice {
  std::string name;
  double time_us = 0;
  ForcedChoice forced;
};

// One measured choice of any implementation (status ok, a finite time > 0): what the
// runtime, which runs far more than NCCL's tuner can select, picks from.
struct TimedChoice {
  std::string name;
  double time_us = 0;
  std::optional<double> host_us;  // the host's cost to issue it, where the eager tune measured it
};

// One problem's winner, as the plugin and the runtime need it.
struct WinnerRecord {
  std::string fingerprint;
  core::Op op = core::Op::kAllReduce;
  core::Dtype dtype = core::Dtype::kFp32;
  core::RedOp redop = core::RedOp::kSum;
  std::uint64_t bytes = 0;
  core::Epilogue epilogue;  // none for a plain collective; NCCL's tuner never applies others
  int world_size = 0;
  std::string winner;
  bool nccl_internal = false;     // forced is meaningful
  ForcedChoice forced;            // what the winner itself asks of NCCL (applied_choice.h decides)
  std::string not_forced_reason;  // why NCCL is left alone, when !nccl_internal
  std::vector<MeasuredChoice> choices;  // in the record's order, at most kMaxKeptChoices
  std::vector<TimedChoice> measured;    // every ok choice, record order, same cap
  // The record's fastest choice for any buffer (any_buffer.h); absent in older records.
  std::optional<core::AnyBufferChoice> any_buffer;
};

// One record (JSON object text). DataLoss naming the problem when it is not a schema-1
// record, is too big or too deep, or has bytes == 0.
core::Result<WinnerRecord> ParseWinnerRecord(std::string_view text);
// The same from a record already read (what `ccltune export` holds); DataLoss on bytes == 0.
core::Result<WinnerRecord> WinnerRecordFrom(const core::ResultRecord& record);

struct ParsedFile {
  std::vector<WinnerRecord> records;
  std::size_t rejected = 0;  // array entries that were not valid records
  std::string first_error;   // the first rejection's reason, for the log
  // From the cache, when nothing was tuned under the fingerprint asked for: the fingerprints
  // it holds and their inputs (JSON text), for core::DescribeFingerprintGap.
  std::vector<std::pair<std::string, std::string>> other_fingerprints;
};
// A JSON array of records. The whole file is an error when it is not a JSON array (or too
// big/deep); single bad entries are counted and skipped. At most kMaxRecords are kept.
core::Result<ParsedFile> ParseResultsFile(std::string_view text);

}  // namespace ccltune::apply

// Bounded, non-throwing record parsing (record_parser.h).
#include "core/apply/record_parser.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace ccltune::apply {
namespace {

// A linear scan, before nlohmann recurses: brackets inside strings are skipped.
bool NestingWithin(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

core::Result<nlohmann::json> ParseBounded(std::string_view text, std::size_t max_bytes,
                                          const char* what) {
  if (text.size() > max_bytes) {
    return core::DataLoss(std::string(what) + " is " + std::to_string(text.size()) +
                          " bytes, more than the " + std::to_string(max_bytes) + " allowed");
  }
  if (!NestingWithin(text, kMaxJsonDepth)) {
    return core::DataLoss(std::string(what) + " nests deeper than " +
                          std::to_string(kMaxJsonDepth) + " levels");
  }
  auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return core::DataLoss(std::string(what) + " is not valid JSON");
  return j;
}

std::vector<MeasuredChoice> ApplicableChoices(const std::vector<core::ChoiceResult>& choices) {
  std::vector<MeasuredChoice> out;
  for (const auto& c : choices) {
    if (out.size() >= kMaxKeptChoices) break;
    if (c.status != core::ChoiceStatus::kOk || !std::isfinite(c.time_us) || c.time_us <= 0)
      continue;
    // Cheap test first: most of a record's choices are other implementations.
    if (c.name != "nccl" && c.name.rfind("nccl:", 0) != 0) continue;
    auto forced = ForcedChoiceFromWinner(c.name);
    if (forced.ok()) out.push_back({c.name, c.time_us, *forced});
  }
  return out;
}

std::vector<TimedChoice> OkChoices(const std::vector<core::ChoiceResult>& choices) {
  std::vector<TimedChoice> out;
  for (const auto& c : choices) {
    if (out.size() >= kMaxKeptChoices) break;
    if (c.status == core::ChoiceStatus::kOk && std::isfinite(c.time_us) && c.time_us > 0)
      out.push_back({c.name, c.time_us, c.host_us});
  }
  return out;
}

core::Result<WinnerRecord> FromJson(const nlohmann::json& j) {
  auto rec = core::ResultFromJson(j);
  if (!rec.ok()) return rec.status();
  return WinnerRecordFrom(*rec);
}

}  // namespace

core::Result<WinnerRecord> WinnerRecordFrom(const core::ResultRecord& rec) {
  if (rec.bytes == 0) return core::DataLoss("result record field bytes must be > 0");
  WinnerRecord out;
  out.fingerprint = rec.fingerprint;
  out.op = rec.op;
  out.dtype = rec.dtype;
  out.redop = rec.redop;
  out.bytes = rec.bytes;
  out.epilogue = rec.epilogue;
  out.world_size = rec.world_size;
  out.winner = rec.winner;
  auto forced = ForcedChoiceFromWinner(rec.winner);
  out.nccl_internal = forced.ok();
  if (forced.ok())
    out.forced = *forced;
  else
    out.not_forced_reason = forced.status().message();
  out.choices = ApplicableChoices(rec.choices);
  out.measured = OkChoices(rec.choices);
  out.any_buffer = rec.any_buffer;
  return out;
}

core::Result<WinnerRecord> ParseWinnerRecord(std::string_view text) {
  auto j = ParseBounded(text, kMaxRecordBytes, "result record");
  if (!j.ok()) return j.status();
  return FromJson(*j);
}

core::Result<ParsedFile> ParseResultsFile(std::string_view text) {
  auto j = ParseBounded(text, kMaxResultsFileBytes, "results file");
  if (!j.ok()) return j.status();
  if (!j->is_array()) return core::DataLoss("results file is not a JSON array of records");
  ParsedFile out;
  for (std::size_t i = 0; i < j->size() && out.records.size() < kMaxRecords; ++i) {
    auto rec = FromJson((*j)[i]);
    if (rec.ok()) {
      out.records.push_back(std::move(rec).value());
    } else {
      if (out.rejected++ == 0)
        out.first_error = "[" + std::to_string(i) + "]: " + rec.status().message();
    }
  }
  return out;
}

}  // namespace ccltune::apply

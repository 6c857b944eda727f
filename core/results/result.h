// The result record of one problem (docs/design.md §4, schema 1) and the winner rule
// (docs/design.md §2.6).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/plan/problem.h"
#include "core/plan/search_mode.h"

namespace ccltune::core {

inline constexpr int kResultSchema = 1;

// kPruned: the adaptive search dropped it after screening (the reason says on what evidence);
// it has no time, because only verified, fully measured choices get one.
enum class ChoiceStatus { kOk, kWrong, kTimeout, kFailed, kSkipped, kPruned };
// "ok", "wrong", "timeout", "failed", "skipped", "pruned"
const char* ChoiceStatusName(ChoiceStatus s);
Result<ChoiceStatus> ParseChoiceStatus(std::string_view s);

struct ChoiceResult {
  std::string name;  // canonical choice name
  nlohmann::json params = nlohmann::json::object();
  double time_us = std::numeric_limits<double>::infinity();  // median over rounds of max
  double min_us = std::numeric_limits<double>::infinity();
  double max_us = std::numeric_limits<double>::infinity();
  double busbw_gbs = 0;
  ChoiceStatus status = ChoiceStatus::kOk;
  std::string reason;  // why wrong/timeout/failed/skipped/pruned
  // The host's own time to issue one op as an eager program does (median over rounds of max
  // across ranks), measured in eager tunes for the choices a program's own buffers run
  // (issue 43): a host-bound program pays it, not the GPU time. Absent elsewhere.
  std::optional<double> host_us;
};

// The fastest choice that runs on any buffer of a program (core/apply/any_buffer.h), kept
// beside a winner that may need pooled buffers (issue 43): what an unmodified program's own
// tensors get. The winner itself when it runs on any buffer.
struct AnyBufferChoice {
  std::string choice;  // canonical choice name, one of the record's ok choices
  double time_us = 0;
  double speedup_vs_default = 0;  // 0 when the default has no valid time (as the winner's)
};

struct ResultRecord {
  int schema = kResultSchema;
  std::string fingerprint;
  Op op = Op::kAllReduce;
  Dtype dtype = Dtype::kFp32;
  RedOp redop = RedOp::kSum;
  std::uint64_t bytes = 0;
  Epilogue epilogue;  // none unless the record's JSON carries "epilogue"
  // Which search measured it; records without the field (written before issue 25) were
  // measured exhaustively.
  Search search = Search::kExhaustive;
  std::string winner;
  nlohmann::json winner_params = nlohmann::json::object();
  double time_us = 0;
  double default_time_us = 0;
  double speedup_vs_default = 1;
  double busbw_gbs = 0;
  std::vector<ChoiceResult> choices;
  // Absent in records written before issue 43, and where no choice that runs on any buffer
  // measured ok.
  std::optional<AnyBufferChoice> any_buffer;
  int world_size = 0;
  std::string tuned_at;  // RFC 3339 UTC
  std::string job_id;
  int attempt = 0;
  std::string tool_version;

  std::string Key() const;  // "{op}:{dtype}:{redop}:{bytes}[:epilogue=kind,hidden=H]"
  // Tables' and plots' group title: "allReduce bf16 sum", or with an epilogue
  // "allReduce bf16 sum + residualRmsNorm hidden=4096" (a fused problem is its own group).
  std::string Group() const;
};

// Winner rule: fastest choice with status ok; the default (`default_choice`) must have been
// measured; another choice wins only if it beats the default by more than
// noise_threshold_percent. Fills winner, time_us, default_time_us, speedup_vs_default,
// busbw_gbs. Error when the default failed and nothing else is valid.
Status PickWinner(ResultRecord& record, const std::string& default_choice,
                  double noise_threshold_percent);

// Whether a choice's cost to issue (host_us) lets it serve an eager program's own buffers:
// always where the default's was not measured (graph tunes, the host backend); else only a
// measured cost no more than the threshold above the default's (issue 43: eager programs are
// often host-bound). The tune's PickAnyBuffer and the runtime's table share it.
bool IssueCostQualifies(std::optional<double> host_us, std::optional<double> default_host_us,
                        double noise_threshold_percent);

// Whether a choice (by canonical name) runs on any buffer of a program.
using AnyBufferTest = std::function<bool(const std::string& choice)>;

// Fills record.any_buffer after PickWinner: the winner when it runs on any buffer, else the
// winner rule among the choices that do (the default, when it is one, wins unless beaten by
// more than the threshold). Where the default's host time was measured (eager tunes), only
// choices whose host time is measured and no more than the threshold above the default's
// qualify: an eager program is often host-bound, and a choice faster on the GPU but dearer
// to issue makes it slower. Leaves it empty when none of them measured ok.
void PickAnyBuffer(ResultRecord& record, const std::string& default_choice,
                   double noise_threshold_percent, const AnyBufferTest& runs_on_any_buffer);

nlohmann::json ToJson(const ResultRecord& record);
// Validates schema version and every field; unknown schema → DataLoss naming the version.
Result<ResultRecord> ResultFromJson(const nlohmann::json& j);
Result<ResultRecord> ResultFromJsonText(std::string_view text);

}  // namespace ccltune::core

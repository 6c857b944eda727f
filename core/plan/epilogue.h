// The work fused after an all-reduce (issue 16, docs/design.md §8): none, a bias add, or the
// residual add + RMSNorm that follows almost every all-reduce of tensor-parallel
// inference. A problem with an epilogue is tokens x hidden elements; its key gains
// "epilogue=<kind>,hidden=H", and records without the field mean `none`, so caches written
// before epilogues existed stay valid.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/base/status.h"
#include "core/plan/types.h"

namespace ccltune::core {

enum class EpilogueKind { kNone, kBias, kResidualRmsNorm };

const char* EpilogueKindName(EpilogueKind kind);             // "none", "bias", "residualRmsNorm"
Result<EpilogueKind> ParseEpilogueKind(std::string_view s);  // error names the allowed kinds
std::string AllowedEpilogueKinds();

// Rows are cut into 16-byte vectors and a GPU block keeps one row in registers.
inline constexpr int kEpilogueHiddenMultiple = 8;
inline constexpr int kMaxEpilogueHidden = 16384;
inline constexpr double kDefaultRmsNormEps = 1e-5;

// The rule on hidden for every kind but none, in one place for plans, records and the
// runtime's arguments: HiddenAllowed, its wording ("a multiple of 8 in 8..16384"), and the
// plan error "<path>.hidden: <n> is not allowed (must be ...)".
bool HiddenAllowed(long long hidden);
std::string HiddenRule();
Status CheckHidden(long long hidden, const std::string& path);

struct Epilogue {
  EpilogueKind kind = EpilogueKind::kNone;
  int hidden = 0;                   // elements per token row; 0 for none
  double eps = kDefaultRmsNormEps;  // residualRmsNorm only

  bool none() const { return kind == EpilogueKind::kNone; }
  // "" for none, else "epilogue=residualRmsNorm,hidden=4096": the part of a problem's key
  // and of its index key (eps changes no timing, so it is recorded but not keyed).
  std::string KeyPart() const;
  // Metric label value: "none" or "residualRmsNorm,hidden=4096".
  std::string Label() const;
  // Bytes of one row (token) of `dtype`.
  std::uint64_t RowBytes(Dtype dtype) const;
  // Rows of a problem of `bytes` (0 for none or a size that is no whole number of rows).
  std::uint64_t Tokens(std::uint64_t bytes, Dtype dtype) const;
  bool operator==(const Epilogue& o) const {
    return kind == o.kind && hidden == o.hidden && eps == o.eps;
  }
};

// Range rules (field names as a plan spells them under `path`, e.g.
// "spec.collectives[0].epilogue"): hidden a multiple of 8 in 8..16384 for every kind but
// none, eps in (0, 1) and only for residualRmsNorm.
Status ValidateEpilogue(const Epilogue& e, const std::string& path);

// {"kind": ..., "hidden": ..., "eps": ...} (eps only for residualRmsNorm); null for none.
nlohmann::json EpilogueToJson(const Epilogue& e);
// Absent or null means none. Errors are DataLoss naming `path` (result records) .
Result<Epilogue> EpilogueFromJson(const nlohmann::json* j, const std::string& path);
// Parses KeyPart() back ("" → none): what a results query's `epilogue=` parameter carries.
Result<Epilogue> ParseEpilogueKeyPart(std::string_view text);

}  // namespace ccltune::core

// ResultRecord <-> JSON (docs/design.md §4, schema 1). Infinite times (timeouts) are written as
// null, because JSON has no infinity, and read back as infinity.
#include <cmath>
#include <limits>

#include "core/results/result.h"

namespace ccltune::core {
namespace {

using nlohmann::json;

json Time(double us) { return std::isfinite(us) ? json(us) : json(nullptr); }
// No time, no bandwidth: null beside a null time (a pruned, skipped, failed or timed-out
// choice), where a 0 would read as a measured figure.
json BusBw(double gbs, double time_us) {
  return std::isfinite(time_us) ? json(gbs) : json(nullptr);
}

json ChoiceToJson(const ChoiceResult& c) {
  json j{{"name", c.name},
         {"params", c.params},
         {"timeUs", Time(c.time_us)},
         {"minUs", Time(c.min_us)},
         {"maxUs", Time(c.max_us)},
         {"status", ChoiceStatusName(c.status)},
         {"busbwGBs", BusBw(c.busbw_gbs, c.time_us)}};
  if (c.host_us) j["hostUs"] = *c.host_us;
  if (!c.reason.empty()) j["reason"] = c.reason;
  return j;
}

// Reads fields of one JSON object; the first problem wins and names the field path.
class Reader {
 public:
  Reader(const json& j, std::string path) : j_(j), path_(std::move(path)) {}
  Status status() const { return status_; }

  const json* Field(const char* key, bool required = true) {
    if (!status_.ok()) return nullptr;
    auto it = j_.find(key);
    if (it == j_.end()) {
      if (required) Fail(key, "is missing");
      return nullptr;
    }
    return &*it;
  }
  void Str(const char* key, std::string& out, bool required = true) {
    const json* f = Field(key, required);
    if (f == nullptr) return;
    if (!f->is_string()) return Fail(key, "must be a string");
    out = f->get<std::string>();
  }
  template <class T>
  void Int(const char* key, T& out) {
    const json* f = Field(key);
    if (f == nullptr) return;
    const bool negative =
        f->is_number_integer() && !f->is_number_unsigned() && f->get<long long>() < 0;
    if (!f->is_number_integer() || negative ||
        f->get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
      return Fail(key, "must be a non-negative integer");
    }
    out = f->get<T>();
  }
  // null = infinity (a timed-out choice).
  void Num(const char* key, double& out, bool null_is_inf = false) {
    const json* f = Field(key);
    if (f == nullptr) return;
    if (f->is_null() && null_is_inf) {
      out = std::numeric_limits<double>::infinity();
    } else if (f->is_number()) {
      out = f->get<double>();
    } else {
      Fail(key, null_is_inf ? "must be a number or null" : "must be a number");
    }
  }
  // A bandwidth: null (no time to have one; records before it wrote 0) reads as 0.
  void BusBw(const char* key, double& out) {
    const json* f = Field(key);
    if (f == nullptr) return;
    if (f->is_null()) {
      out = 0;
    } else if (f->is_number()) {
      out = f->get<double>();
    } else {
      Fail(key, "must be a number or null");
    }
  }
  void Object(const char* key, json& out) {
    const json* f = Field(key);
    if (f == nullptr) return;
    if (!f->is_object()) return Fail(key, "must be an object");
    out = *f;
  }
  void Fail(const std::string& key, const std::string& why) {
    if (status_.ok()) status_ = DataLoss("result record field " + path_ + key + " " + why);
  }

 private:
  const json& j_;
  std::string path_;
  Status status_;
};

Result<ChoiceResult> ChoiceFromJson(const json& j, const std::string& path) {
  if (!j.is_object()) return DataLoss("result record field " + path + " must be an object");
  Reader r(j, path + ".");
  ChoiceResult c;
  std::string status;
  r.Str("name", c.name);
  r.Object("params", c.params);
  r.Num("timeUs", c.time_us, true);
  r.Num("minUs", c.min_us, true);
  r.Num("maxUs", c.max_us, true);
  r.Str("status", status);
  r.Str("reason", c.reason, false);
  r.BusBw("busbwGBs", c.busbw_gbs);
  if (j.contains("hostUs")) {
    double host = 0;
    r.Num("hostUs", host);
    if (r.status().ok() && !(std::isfinite(host) && host > 0))
      r.Fail("hostUs", "must be a time > 0");
    c.host_us = host;
  }
  CCLTUNE_RETURN_IF_ERROR(r.status());
  auto parsed = ParseChoiceStatus(status);
  if (!parsed.ok())
    return DataLoss("result record field " + path + ".status: " + parsed.status().message());
  c.status = *parsed;
  return c;
}

Status ReadProblem(const json& j, ResultRecord& rec) {
  Reader r(j, "");
  std::string op, dtype, redop;
  r.Str("op", op);
  r.Str("dtype", dtype);
  r.Str("redop", redop);
  r.Int("bytes", rec.bytes);
  CCLTUNE_RETURN_IF_ERROR(r.status());
  auto o = ParseOp(op);
  auto d = ParseDtype(dtype);
  if (!o.ok()) return DataLoss("result record field op: " + o.status().message());
  if (!d.ok()) return DataLoss("result record field dtype: " + d.status().message());
  rec.op = *o;
  rec.dtype = *d;
  if (redop == "none") {
    rec.redop = RedOp::kNone;
  } else {
    auto ro = ParseRedOp(redop);
    if (!ro.ok()) return DataLoss("result record field redop: " + ro.status().message());
    rec.redop = *ro;
  }
  return Status::Ok();
}

Status ReadChoices(const json& j, ResultRecord& rec) {
  auto it = j.find("choices");
  if (it == j.end() || !it->is_array()) {
    return DataLoss("result record field choices must be an array");
  }
  for (std::size_t i = 0; i < it->size(); ++i) {
    CCLTUNE_ASSIGN_OR_RETURN(auto c,
                             ChoiceFromJson((*it)[i], "choices[" + std::to_string(i) + "]"));
    rec.choices.push_back(std::move(c));
  }
  return Status::Ok();
}

// Optional within schema 1: records written before issue 25 have none and were exhaustive.
Status ReadSearch(const json& j, ResultRecord& rec) {
  Reader r(j, "");
  std::string search;
  r.Str("search", search, /*required=*/false);
  CCLTUNE_RETURN_IF_ERROR(r.status());
  if (!j.contains("search")) return Status::Ok();
  auto parsed = ParseSearch(search);
  if (!parsed.ok()) return DataLoss("result record field search: " + parsed.status().message());
  rec.search = *parsed;
  return Status::Ok();
}

// Optional within schema 1 (issue 43): records written before it have none, and readers built
// before it ignore the field (they read only the fields they know).
Status ReadAnyBuffer(const json& j, ResultRecord& rec) {
  auto it = j.find("anyBuffer");
  if (it == j.end()) return Status::Ok();
  if (!it->is_object()) return DataLoss("result record field anyBuffer must be an object");
  Reader r(*it, "anyBuffer.");
  AnyBufferChoice a;
  r.Str("choice", a.choice);
  r.Num("timeUs", a.time_us);
  r.Num("speedupVsDefault", a.speedup_vs_default);
  CCLTUNE_RETURN_IF_ERROR(r.status());
  if (a.choice.empty()) return DataLoss("result record field anyBuffer.choice must not be empty");
  if (!std::isfinite(a.time_us) || a.time_us <= 0) {
    return DataLoss("result record field anyBuffer.timeUs must be a time > 0");
  }
  rec.any_buffer = std::move(a);
  return Status::Ok();
}

json AnyBufferToJson(const AnyBufferChoice& a) {
  return {{"choice", a.choice}, {"timeUs", a.time_us}, {"speedupVsDefault", a.speedup_vs_default}};
}

}  // namespace

nlohmann::json ToJson(const ResultRecord& r) {
  json choices = json::array();
  for (const auto& c : r.choices) choices.push_back(ChoiceToJson(c));
  json j{{"schema", r.schema},
         {"fingerprint", r.fingerprint},
         {"op", OpName(r.op)},
         {"dtype", DtypeName(r.dtype)},
         {"redop", RedOpName(r.redop)},
         {"bytes", r.bytes},
         {"winner", r.winner},
         {"winnerParams", r.winner_params},
         {"timeUs", Time(r.time_us)},
         {"defaultTimeUs", Time(r.default_time_us)},
         {"speedupVsDefault", r.speedup_vs_default},
         {"busbwGBs", BusBw(r.busbw_gbs, r.time_us)},
         {"choices", choices},
         {"worldSize", r.world_size},
         {"tunedAt", r.tuned_at},
         {"jobId", r.job_id},
         {"attempt", r.attempt},
         {"toolVersion", r.tool_version},
         {"search", SearchName(r.search)}};
  // Only when there is one: records of plain collectives keep their schema-1 shape.
  if (!r.epilogue.none()) j["epilogue"] = EpilogueToJson(r.epilogue);
  if (r.any_buffer) j["anyBuffer"] = AnyBufferToJson(*r.any_buffer);
  return j;
}

Result<ResultRecord> ResultFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return DataLoss("result record is not a JSON object");
  auto schema = j.find("schema");
  if (schema == j.end() || !schema->is_number_integer()) {
    return DataLoss("result record has no integer schema field");
  }
  if (schema->get<long long>() != kResultSchema) {
    return DataLoss("result record schema " + schema->dump() +
                    " is not supported (this build reads schema " + std::to_string(kResultSchema) +
                    ")");
  }
  ResultRecord rec;
  Reader r(j, "");
  r.Str("fingerprint", rec.fingerprint);
  r.Str("winner", rec.winner);
  r.Object("winnerParams", rec.winner_params);
  r.Num("timeUs", rec.time_us, true);
  r.Num("defaultTimeUs", rec.default_time_us, true);
  r.Num("speedupVsDefault", rec.speedup_vs_default);
  r.BusBw("busbwGBs", rec.busbw_gbs);
  r.Int("worldSize", rec.world_size);
  r.Str("tunedAt", rec.tuned_at);
  r.Str("jobId", rec.job_id);
  r.Int("attempt", rec.attempt);
  r.Str("toolVersion", rec.tool_version);
  CCLTUNE_RETURN_IF_ERROR(r.status());
  CCLTUNE_RETURN_IF_ERROR(ReadProblem(j, rec));
  const auto epilogue = j.find("epilogue");
  CCLTUNE_ASSIGN_OR_RETURN(
      rec.epilogue, EpilogueFromJson(epilogue == j.end() ? nullptr : &*epilogue, "epilogue"));
  if (!rec.epilogue.none() && rec.epilogue.Tokens(rec.bytes, rec.dtype) == 0) {
    return DataLoss("result record field bytes " + std::to_string(rec.bytes) +
                    " is no whole number of rows of the epilogue's hidden " +
                    std::to_string(rec.epilogue.hidden));
  }
  CCLTUNE_RETURN_IF_ERROR(ReadSearch(j, rec));
  CCLTUNE_RETURN_IF_ERROR(ReadAnyBuffer(j, rec));
  CCLTUNE_RETURN_IF_ERROR(ReadChoices(j, rec));
  return rec;
}

Result<ResultRecord> ResultFromJsonText(std::string_view text) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return DataLoss("result record is not valid JSON");
  return ResultFromJson(j);
}

}  // namespace ccltune::core

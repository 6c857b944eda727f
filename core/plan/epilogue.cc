// Epilogue names, key parts and range rules (epilogue.h).
#include "core/plan/epilogue.h"

#include <charconv>

#include "core/base/name_table.h"
#include "core/base/yaml_fields.h"

namespace ccltune::core {
namespace {

constexpr NameTable<EpilogueKind, 3> kKinds{
    {{{EpilogueKind::kNone, "none"},
      {EpilogueKind::kBias, "bias"},
      {EpilogueKind::kResidualRmsNorm, "residualRmsNorm"}}}};
constexpr std::string_view kHiddenPart = ",hidden=";

Result<int> ParseHidden(std::string_view v) {
  int n = 0;
  const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size()) {
    return InvalidArgument("hidden '" + std::string(v) + "' is not an integer");
  }
  return n;
}

}  // namespace

const char* EpilogueKindName(EpilogueKind kind) { return kKinds.Name(kind); }
std::string AllowedEpilogueKinds() { return kKinds.Allowed(); }
Result<EpilogueKind> ParseEpilogueKind(std::string_view s) {
  return kKinds.Parse(s, "epilogue kind");
}

bool HiddenAllowed(long long hidden) {
  return hidden >= kEpilogueHiddenMultiple && hidden <= kMaxEpilogueHidden &&
         hidden % kEpilogueHiddenMultiple == 0;
}

std::string HiddenRule() {
  return "a multiple of " + std::to_string(kEpilogueHiddenMultiple) + " in " +
         std::to_string(kEpilogueHiddenMultiple) + ".." + std::to_string(kMaxEpilogueHidden);
}

Status CheckHidden(long long hidden, const std::string& path) {
  if (HiddenAllowed(hidden)) return Status::Ok();
  return yaml::FieldError(
      yaml::Key(path, "hidden"),
      std::to_string(hidden) + " is not allowed (must be " + HiddenRule() + ")");
}

std::string Epilogue::KeyPart() const {
  if (none()) return "";
  return "epilogue=" + Label();
}

std::string Epilogue::Label() const {
  if (none()) return "none";
  return std::string(EpilogueKindName(kind)) + ",hidden=" + std::to_string(hidden);
}

std::uint64_t Epilogue::RowBytes(Dtype dtype) const {
  return static_cast<std::uint64_t>(hidden) * DtypeSize(dtype);
}

std::uint64_t Epilogue::Tokens(std::uint64_t bytes, Dtype dtype) const {
  const std::uint64_t row = RowBytes(dtype);
  if (none() || row == 0 || bytes % row != 0) return 0;
  return bytes / row;
}

Status ValidateEpilogue(const Epilogue& e, const std::string& path) {
  if (e.none()) return Status::Ok();
  CCLTUNE_RETURN_IF_ERROR(CheckHidden(e.hidden, path));
  if (e.kind == EpilogueKind::kResidualRmsNorm && !(e.eps > 0 && e.eps < 1)) {
    return yaml::FieldError(yaml::Key(path, "eps"),
                            "is not allowed (must be > 0 and < 1, e.g. 1e-5 or 1e-6)");
  }
  return Status::Ok();
}

nlohmann::json EpilogueToJson(const Epilogue& e) {
  if (e.none()) return nullptr;
  nlohmann::json j{{"kind", EpilogueKindName(e.kind)}, {"hidden", e.hidden}};
  if (e.kind == EpilogueKind::kResidualRmsNorm) j["eps"] = e.eps;
  return j;
}

Result<Epilogue> EpilogueFromJson(const nlohmann::json* j, const std::string& path) {
  Epilogue e;
  if (j == nullptr || j->is_null()) return e;
  auto bad = [&](const std::string& field, const std::string& why) {
    return DataLoss("result record field " + path + "." + field + " " + why);
  };
  if (!j->is_object()) return DataLoss("result record field " + path + " must be an object");
  const auto kind = j->find("kind");
  if (kind == j->end() || !kind->is_string()) return bad("kind", "must be a string");
  auto k = ParseEpilogueKind(kind->get<std::string>());
  if (!k.ok()) return bad("kind", k.status().message());
  e.kind = *k;
  const auto hidden = j->find("hidden");
  if (hidden == j->end() || !hidden->is_number_integer() || hidden->get<long long>() < 0 ||
      hidden->get<long long>() > kMaxEpilogueHidden) {
    return bad("hidden", "must be an integer 0.." + std::to_string(kMaxEpilogueHidden));
  }
  e.hidden = hidden->get<int>();
  const auto eps = j->find("eps");
  if (eps != j->end()) {
    if (!eps->is_number()) return bad("eps", "must be a number");
    e.eps = eps->get<double>();
  }
  const Status st = ValidateEpilogue(e, path);
  if (!st.ok()) return DataLoss("result record field " + st.message());
  return e;
}

Result<Epilogue> ParseEpilogueKeyPart(std::string_view text) {
  Epilogue e;
  if (text.empty() || text == "none") return e;
  constexpr std::string_view kPrefix = "epilogue=";
  if (text.substr(0, kPrefix.size()) == kPrefix) text.remove_prefix(kPrefix.size());
  const auto comma = text.find(kHiddenPart);
  if (comma == std::string_view::npos) {
    return InvalidArgument("epilogue '" + std::string(text) +
                           "' must be <kind>,hidden=<H> (kinds: " + AllowedEpilogueKinds() + ")");
  }
  CCLTUNE_ASSIGN_OR_RETURN(e.kind, ParseEpilogueKind(text.substr(0, comma)));
  CCLTUNE_ASSIGN_OR_RETURN(e.hidden, ParseHidden(text.substr(comma + kHiddenPart.size())));
  CCLTUNE_RETURN_IF_ERROR(ValidateEpilogue(e, "epilogue"));
  return e;
}

}  // namespace ccltune::core

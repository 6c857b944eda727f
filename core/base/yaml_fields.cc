#include "core/base/yaml_fields.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace ccltune::core::yaml {
namespace {

std::size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string Suggest(const std::string& key, const std::vector<std::string>& allowed) {
  std::string best;
  std::size_t best_d = 3;  // farther than 2 edits is not a typo
  for (const auto& a : allowed) {
    const std::size_t d = EditDistance(key, a);
    if (d < best_d) {
      best_d = d;
      best = a;
    }
  }
  return best.empty() ? "" : "did you mean " + best + "?; ";
}

std::string Scalar(const YAML::Node& node) { return node.IsScalar() ? node.Scalar() : ""; }

}  // namespace

std::string Key(const std::string& path, const std::string& key) {
  if (path.empty() || path.back() == '.') return path + key;
  return path + "." + key;
}

std::string Index(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

Status FieldError(const std::string& path, const std::string& message) {
  std::string line = (path.empty() ? "plan" : path) + ": " + message;
  std::replace(line.begin(), line.end(), '\n', ' ');  // one line, always
  return InvalidArgument(line);
}

Result<YAML::Node> Load(std::string_view text) {
  try {
    YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsDefined() || root.IsNull()) return FieldError("", "the document is empty");
    return root;
  } catch (const YAML::Exception& e) {
    return FieldError("", "not valid YAML/JSON at line " + std::to_string(e.mark.line + 1) +
                              ", column " + std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
}

Status CheckKeys(const YAML::Node& map, const std::string& path,
                 const std::vector<std::string>& allowed) {
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  if (!map.IsMap()) return FieldError(path, "must be a mapping with fields " + list);
  for (const auto& kv : map) {
    const std::string key = Scalar(kv.first);
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    return FieldError(Key(path, key.empty() ? "?" : key),
                      "unknown field (" + Suggest(key, allowed) + "allowed: " + list + ")");
  }
  return Status::Ok();
}

Result<std::string> String(const YAML::Node& node, const std::string& path) {
  if (!node.IsScalar()) return FieldError(path, "must be a string");
  return node.Scalar();
}

Result<long long> Integer(const YAML::Node& node, const std::string& path) {
  const std::string s = Scalar(node);
  long long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) {
    return FieldError(path, "'" + s + "' is not an integer");
  }
  return v;
}

Result<double> Number(const YAML::Node& node, const std::string& path) {
  const std::string s = Scalar(node);
  char* end = nullptr;
  const double v = s.empty() ? 0 : std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v)) {
    return FieldError(path, "'" + s + "' is not a number");
  }
  return v;
}

Result<bool> Bool(const YAML::Node& node, const std::string& path) {
  const std::string s = Scalar(node);
  if (s == "true") return true;
  if (s == "false") return false;
  return FieldError(path, "'" + s + "' is not allowed (must be true or false)");
}

}  // namespace ccltune::core::yaml

// Internal to ccltune_core (not installed, not for other folders): typed reads of YAML
// nodes that turn every problem into one InvalidArgument line "path: what is wrong".
// yaml-cpp throws; these functions catch at this edge.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"

namespace ccltune::core::yaml {

// "a" + "b" → "a.b"; "" + "b" → "b"; "spec." + "b" → "spec.b".
std::string Key(const std::string& path, const std::string& key);
std::string Index(const std::string& path, std::size_t i);  // "a[3]"
Status FieldError(const std::string& path, const std::string& message);

// Parses a YAML (or JSON) document; syntax errors name line and column (1-based).
Result<YAML::Node> Load(std::string_view text);

// Every key of `map` must be in `allowed`; else "path.key: unknown field (did you mean
// x?; allowed: ...)". `map` must be a mapping (error names `path`).
Status CheckKeys(const YAML::Node& map, const std::string& path,
                 const std::vector<std::string>& allowed);

Result<std::string> String(const YAML::Node& node, const std::string& path);
Result<long long> Integer(const YAML::Node& node, const std::string& path);
Result<double> Number(const YAML::Node& node, const std::string& path);
Result<bool> Bool(const YAML::Node& node, const std::string& path);

}  // namespace ccltune::core::yaml

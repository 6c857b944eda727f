// Text exposition format 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/).
#include <charconv>
#include <cmath>

#include "core/metrics.h"

namespace ccltune::core {
namespace {

bool IsNameChar(char c, bool first, bool allow_colon) {
  bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  if (allow_colon && c == ':') return true;
  return alpha || (!first && c >= '0' && c <= '9');
}

bool IsValidName(const std::string& name, bool allow_colon) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i)
    if (!IsNameChar(name[i], i == 0, allow_colon)) return false;
  return true;
}

void AppendSample(const std::string& family, const Sample& sample, std::string& out) {
  out += family;
  out += sample.suffix;
  if (!sample.labels.empty()) {
    out += '{';
    for (std::size_t i = 0; i < sample.labels.size(); ++i) {
      if (i) out += ',';
      out += sample.labels[i].first;
      out += "=\"";
      out += EscapeLabelValue(sample.labels[i].second);
      out += '"';
    }
    out += '}';
  }
  out += ' ';
  out += FormatValue(sample.value);
  out += '\n';
}

}  // namespace

bool IsValidMetricName(const std::string& name) { return IsValidName(name, true); }

bool IsValidLabelName(const std::string& name) {
  // Names starting with "__" are reserved for Prometheus' internal use.
  return IsValidName(name, false) && name.rfind("__", 0) != 0;
}

std::string EscapeHelp(const std::string& help) {
  std::string out;
  for (char c : help) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string EscapeLabelValue(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Shortest representation that parses back to the same double: "0.001", not
  // "0.0010000000000000000208" (bucket `le` values are compared as strings by people).
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  return ec == std::errc() ? std::string(buf, end) : "NaN";
}

std::string SerializeText(const std::vector<FamilySnapshot>& families) {
  std::string out;
  for (const FamilySnapshot& family : families) {
    out += "# HELP " + family.name + " " + EscapeHelp(family.help) + "\n";
    out += "# TYPE " + family.name + " " + MetricTypeName(family.type) + "\n";
    for (const Sample& sample : family.samples) AppendSample(family.name, sample, out);
  }
  return out;
}

std::string SerializeText(const Registry& registry) { return SerializeText(registry.Collect()); }

}  // namespace ccltune::core

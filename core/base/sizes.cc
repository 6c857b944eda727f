// Size strings of plans and flags: a decimal byte count with an optional binary unit.
// Decimal units (KB, MB) are rejected on purpose: 1KB is ambiguous (1000 or 1024).
#include "core/base/sizes.h"

#include <cctype>
#include <charconv>
#include <string>

namespace ccltune::core {
namespace {

struct Unit {
  const char* name;
  std::uint64_t bytes;
};
constexpr Unit kUnits[] = {
    {"GiB", 1ull << 30}, {"MiB", 1ull << 20}, {"KiB", 1ull << 10}, {"B", 1}, {"", 1}};

std::string Hint(const std::string& unit) {
  std::string lower;
  for (char c : unit) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "k" || lower == "kb" || lower == "kib") return " (use KiB)";
  if (lower == "m" || lower == "mb" || lower == "mib") return " (use MiB)";
  if (lower == "g" || lower == "gb" || lower == "gib") return " (use GiB)";
  return " (units: B, KiB, MiB, GiB)";
}

}  // namespace

Result<std::uint64_t> ParseSize(std::string_view text) {
  const std::string s(text);
  auto bad = [&](const std::string& why) {
    return InvalidArgument("'" + s + "' is not a size: " + why);
  };
  if (s.empty()) return bad("empty");
  if (s[0] == '-') return bad("negative");
  std::size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  if (digits == 0) return bad("must start with a number, e.g. 4096 or 64MiB");
  if (digits < s.size() && (s[digits] == '.' || s[digits] == ',')) {
    return bad("fractions are not allowed (write 1536KiB, not 1.5MiB)");
  }
  std::uint64_t n = 0;
  if (std::from_chars(s.data(), s.data() + digits, n).ec != std::errc()) {
    return bad("too large");
  }
  const std::string unit = s.substr(digits);
  for (const auto& u : kUnits) {
    if (unit != u.name) continue;
    if (n == 0) return bad("must be > 0");
    if (n > UINT64_MAX / u.bytes) return bad("too large");
    return n * u.bytes;
  }
  return bad("unknown unit '" + unit + "'" + Hint(unit));
}

std::string FormatSize(std::uint64_t bytes) {
  for (const auto& u : kUnits) {
    if (u.bytes > 1 && bytes != 0 && bytes % u.bytes == 0) {
      return std::to_string(bytes / u.bytes) + u.name;
    }
  }
  return std::to_string(bytes);
}

}  // namespace ccltune::core

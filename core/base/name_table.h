// Internal to ccltune_core (not for other folders): a contract enum's names in one table,
// so its name, its parser (strict, naming the allowed values) and the allowed list agree.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <utility>

#include "core/base/status.h"

namespace ccltune::core {

template <class E, std::size_t N>
struct NameTable {
  std::array<std::pair<E, const char*>, N> entries;
  const char* Name(E e) const {
    for (const auto& [v, n] : entries)
      if (v == e) return n;
    return "?";
  }
  std::string Allowed() const {
    std::string out;
    for (const auto& [v, n] : entries) out += (out.empty() ? "" : ", ") + std::string(n);
    return out;
  }
  Result<E> Parse(std::string_view s, const char* what) const {
    for (const auto& [v, n] : entries)
      if (s == n) return v;
    return InvalidArgument("'" + std::string(s) + "' is not a known " + what +
                           " (allowed: " + Allowed() + ")");
  }
};

}  // namespace ccltune::core

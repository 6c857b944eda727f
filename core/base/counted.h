// "1 problem", "2 problems": a count with its noun, for the lines users read.
#pragma once

#include <string>
#include <string_view>

namespace ccltune::core {

// `plural` defaults to `singular` + "s" (rank, problem, record, choice).
inline std::string Counted(long long n, std::string_view singular, std::string_view plural = {}) {
  std::string noun(n == 1 ? singular : (plural.empty() ? singular : plural));
  if (n != 1 && plural.empty()) noun += 's';
  return std::to_string(n) + " " + noun;
}

}  // namespace ccltune::core

// How a tuning job searches the choices of a problem (issue 25): the plan's `search` field and
// the result record's `search`. `exhaustive` measures every applicable choice in full;
// `adaptive`, the default, screens the other choices against the backend's default and
// measures in full only those that can still win (core/search/screening.h holds that rule).
#pragma once

#include <string>
#include <string_view>

#include "core/base/status.h"

namespace ccltune::core {

enum class Search { kExhaustive, kAdaptive };

const char* SearchName(Search search);  // "exhaustive", "adaptive"
// Strict: the error names the allowed values ("'fast' is not a known search (allowed: ...)").
Result<Search> ParseSearch(std::string_view text);
std::string AllowedSearches();

}  // namespace ccltune::core

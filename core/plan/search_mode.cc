// The search modes' names (search_mode.h).
#include "core/plan/search_mode.h"

#include "core/base/name_table.h"

namespace ccltune::core {
namespace {

constexpr NameTable<Search, 2> kSearches{
    {{{Search::kExhaustive, "exhaustive"}, {Search::kAdaptive, "adaptive"}}}};

}  // namespace

const char* SearchName(Search s) { return kSearches.Name(s); }
Result<Search> ParseSearch(std::string_view text) { return kSearches.Parse(text, "search"); }
std::string AllowedSearches() { return kSearches.Allowed(); }

}  // namespace ccltune::core

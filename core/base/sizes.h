// Size strings of plans and flags: "4096", "1KiB", "64MiB", "1GiB", "512B" (binary units
// only; "1KB" is rejected with a hint, since it is ambiguous: 1000 or 1024).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/base/status.h"

namespace ccltune::core {

// Bytes; 0 and negatives are errors.
Result<std::uint64_t> ParseSize(std::string_view text);
std::string FormatSize(std::uint64_t bytes);  // "1KiB", "64MiB", "1536" when not a unit

}  // namespace ccltune::core

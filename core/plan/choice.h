// Choice names (docs/design.md §5) are a contract: "nccl", "nccl:algo=ring,proto=ll",
// "oneshot:blocks=8,threads=512", "ring". A name is a base plus ordered key=value params.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/plan/types.h"

namespace ccltune::core {

struct ChoiceName {
  std::string base;                           // "nccl", "ring", "oneshot", ...
  std::map<std::string, std::string> params;  // "algo" -> "ring"
  std::string ToString() const;               // canonical: params sorted by key
};

// Strict: unknown base for the backend, unknown param key or value → InvalidArgument
// naming what is allowed. backend "" accepts the bases of every backend.
Result<ChoiceName> ParseChoice(std::string_view text, const std::string& backend = "");

// Bases known to each backend ("host": ring, recursive-doubling, direct, rs+ag, pairwise,
// binomial; "nccl": nccl, nccl-reg, nccl-symm, rs+ag, oneshot, twoshot, ...).
const std::vector<std::string>& ChoiceBases(const std::string& backend);
// The always-measured default per backend: "nccl" or "ring".
std::string DefaultChoice(const std::string& backend);

}  // namespace ccltune::core

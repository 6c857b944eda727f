#include "core/node/fingerprint_gap.h"

#include <limits>

namespace ccltune::core {
namespace {

std::string Text(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.is_null() ? "none" : v.dump();
}

// The fields where `theirs` differs from `mine` (a field missing on one side counts).
std::vector<std::string> Differences(const nlohmann::json& mine, const nlohmann::json& theirs) {
  std::vector<std::string> fields;
  for (const auto& [key, value] : mine.items()) {
    if (!theirs.contains(key) || theirs.at(key) != value) fields.push_back(key);
  }
  for (const auto& [key, value] : theirs.items()) {
    if (!mine.contains(key)) fields.push_back(key);
  }
  return fields;
}

}  // namespace

std::string DescribeFingerprintGap(const nlohmann::json& mine,
                                   const std::vector<std::pair<std::string, std::string>>& cached) {
  std::size_t best_count = std::numeric_limits<std::size_t>::max(), readable = 0;
  std::string best_fp;
  nlohmann::json best;
  for (const auto& [fp, text] : cached) {
    const nlohmann::json theirs = nlohmann::json::parse(text, nullptr, false);
    if (!theirs.is_object()) continue;
    ++readable;
    const std::size_t n = Differences(mine, theirs).size();
    if (n < best_count) best_count = n, best_fp = fp, best = theirs;
  }
  if (readable == 0) return "";
  std::string tuned, here;
  for (const std::string& field : Differences(mine, best)) {
    tuned += (tuned.empty() ? "" : ", ") + field + " " +
             Text(best.contains(field) ? best.at(field) : nlohmann::json());
    here += (here.empty() ? "" : ", ") + Text(mine.contains(field) ? mine.at(field) : nlohmann::json());
  }
  const std::string which = "the cache's closest fingerprint " + best_fp + " (of " +
                            std::to_string(readable) + ")";
  if (tuned.empty()) return which + " has the same inputs (pinned or tuned under another name)";
  return which + " was tuned with " + tuned + " where this process has " + here;
}

}  // namespace ccltune::core

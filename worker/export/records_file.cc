// Records from an exported JSON array (records_file.h).
#include "worker/export/records_file.h"

#include <fstream>
#include <set>
#include <sstream>

#include "worker/export/cache_source.h"

namespace ccltune::worker::exporting {
namespace {

core::Result<std::vector<core::ResultRecord>> ParseArray(const std::string& path,
                                                         const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_array())
    return core::InvalidArgument("--results-file " + path +
                                 ": not a JSON array of records (ccltune export --format json)");
  std::vector<core::ResultRecord> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    auto r = core::ResultFromJson(j[i]);
    if (!r.ok())
      return r.status().WithContext("--results-file " + path + " [" + std::to_string(i) + "]");
    out.push_back(std::move(r).value());
  }
  return out;
}

}  // namespace

core::Result<FileRecords> ReadRecordsFile(const std::string& path, const std::string& wanted) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::NotFound("--results-file " + path + ": cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  CCLTUNE_ASSIGN_OR_RETURN(auto records, ParseArray(path, text.str()));
  std::set<std::string> fingerprints;
  for (const auto& r : records) fingerprints.insert(r.fingerprint);
  FileRecords out;
  CCLTUNE_ASSIGN_OR_RETURN(
      out.fingerprint,
      PickFingerprintAmong({fingerprints.begin(), fingerprints.end()}, wanted, path));
  for (auto& r : records)
    if (r.fingerprint == out.fingerprint) out.records.push_back(std::move(r));
  return out;
}

}  // namespace ccltune::worker::exporting

#include "core/metrics/push_group.h"

#include <openssl/evp.h>

namespace ccltune::core {
namespace {

bool IsPlainSegmentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

// URL-safe base64 (RFC 4648 §5), as the Pushgateway decodes `@base64` values.
std::string Base64Url(const std::string& in) {
  if (in.empty()) return "=";  // the Pushgateway's spelling of an empty value
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()),
                          static_cast<int>(in.size()));
  out.resize(static_cast<std::size_t>(n));
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return out;
}

}  // namespace

std::pair<std::string, std::string> GroupingLabel(const std::string& name,
                                                  const std::string& value) {
  bool plain = !value.empty();
  for (char c : value) plain = plain && IsPlainSegmentChar(c);
  if (plain) return {name, value};
  return {name + "@base64", Base64Url(value)};
}

GroupingLabels TuningPushGrouping(const std::string& job_id, int rank) {
  return {GroupingLabel("ccltune_job", job_id), GroupingLabel("rank", std::to_string(rank))};
}

std::string TuningPushGroupPath(const std::string& job_id, int rank) {
  std::string path = std::string("/metrics/job/") + kTuningPushJob;
  for (const auto& [name, value] : TuningPushGrouping(job_id, rank))
    path += "/" + name + "/" + value;
  return path;
}

}  // namespace ccltune::core

#include "controller/job/pushgateway_url.h"

#include <regex>

namespace ccltune::controller {

core::Status CheckPushgatewayUrl(const std::string& url, const std::string& field) {
  const std::string form = "http[s]://host[:port][/path]";
  if (url.find('@') != std::string::npos) {
    return core::InvalidArgument(field + ": must not hold credentials (user:password@); expected " +
                                 form);
  }
  if (url.size() > kMaxPushgatewayUrl) {
    return core::InvalidArgument(field + ": longer than " + std::to_string(kMaxPushgatewayUrl) +
                                 " characters");
  }
  static const std::regex kForm(
      R"(^https?://)"
      R"(([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*)"
      R"(|\[[0-9A-Fa-f:.]+\]))"
      R"((:([0-9]{1,5}))?)"
      R"((/[A-Za-z0-9._~-]*)*$)");
  std::smatch m;
  if (!std::regex_match(url, m, kForm)) {
    return core::InvalidArgument(field + ": '" + url + "' is not " + form);
  }
  if (m[6].matched) {
    long port = std::stol(m[6].str());
    if (port < 1 || port > 65535) {
      return core::InvalidArgument(field + ": port " + m[6].str() + " is outside [1, 65535]");
    }
  }
  return core::Status::Ok();
}

std::string PushgatewayBase(const std::string& url) {
  std::string base = url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base;
}

}  // namespace ccltune::controller

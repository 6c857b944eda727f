// ParseQueryString (controller/http/http_server.h). Its own file: cpprest headers are slow and
// need _TURN_OFF_PLATFORM_STRING (set in CMakeLists.txt), so only this file includes one.
#include <cpprest/base_uri.h>

#include <algorithm>

#include "controller/http/http_server.h"

namespace ccltune::controller {
namespace {

core::Result<std::string> Decode(std::string component) {
  std::replace(component.begin(), component.end(), '+', ' ');
  try {
    return web::uri::decode(component);
  } catch (const web::uri_exception& e) {  // "%zz", "%4", a non-ASCII byte
    return core::InvalidArgument(std::string("query string: ") + e.what());
  }
}

}  // namespace

core::Result<std::map<std::string, std::string>> ParseQueryString(const std::string& raw) {
  std::map<std::string, std::string> out;
  std::size_t start = 0;
  while (start < raw.size()) {
    std::size_t end = std::min(raw.find('&', start), raw.size());
    std::string pair = raw.substr(start, end - start);
    start = end + 1;
    if (pair.empty()) continue;
    std::size_t eq = pair.find('=');
    CCLTUNE_ASSIGN_OR_RETURN(std::string key, Decode(pair.substr(0, eq)));
    std::string value;
    if (eq != std::string::npos) {
      CCLTUNE_ASSIGN_OR_RETURN(value, Decode(pair.substr(eq + 1)));
    }
    out[key] = std::move(value);
  }
  return out;
}

}  // namespace ccltune::controller

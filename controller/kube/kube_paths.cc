// Query values of the REST paths (kube_paths.h).
#include "controller/kube/kube_paths.h"

#include <cctype>

namespace ccltune::controller {

std::string QueryEscape(const std::string& value) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace ccltune::controller

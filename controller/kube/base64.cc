// Base64 decoding (base64.h).
#include "controller/kube/base64.h"

namespace ccltune::controller {

std::string Base64Decode(const std::string& in) {
  static const std::string kChars =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int val = 0, bits = -8;
  for (char c : in) {
    auto pos = kChars.find(c);
    if (pos == std::string::npos) continue;  // '=' padding and line breaks
    val = (val << 6) + static_cast<int>(pos);
    bits += 6;
    if (bits >= 0) {
      out.push_back(static_cast<char>((val >> bits) & 0xFF));
      bits -= 8;
    }
  }
  return out;
}

}  // namespace ccltune::controller

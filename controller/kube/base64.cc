// Base64 (base64.h).
#include "controller/kube/base64.h"

namespace ccltune::controller {
namespace {
const std::string kChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}  // namespace

std::string Base64Encode(const std::string& in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  unsigned val = 0;
  int bits = -6;
  for (unsigned char c : in) {
    val = (val << 8) + c;
    bits += 8;
    while (bits >= 0) {
      out.push_back(kChars[(val >> bits) & 0x3F]);
      bits -= 6;
    }
  }
  if (bits > -6) out.push_back(kChars[((val << 8) >> (bits + 8)) & 0x3F]);
  while (out.size() % 4 != 0) out.push_back('=');
  return out;
}

std::string Base64Decode(const std::string& in) {
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

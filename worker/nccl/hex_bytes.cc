// Hex text of opaque handles (hex_bytes.h).
#include "worker/nccl/hex_bytes.h"

#include <cstdio>

namespace ccltune::worker::nccl {

std::string HexBytes(const void* data, std::size_t n) {
  static const char kDigits[] = "0123456789abcdef";
  const auto* p = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    out += kDigits[p[i] >> 4];
    out += kDigits[p[i] & 15];
  }
  return out;
}

core::Status UnhexBytes(const std::string& hex, void* out, std::size_t n, const std::string& what) {
  if (hex.size() != 2 * n) {
    return core::DataLoss(what + " has " + std::to_string(hex.size()) + " hex digits, want " +
                          std::to_string(2 * n));
  }
  auto* p = static_cast<unsigned char*>(out);
  for (std::size_t i = 0; i < n; ++i) {
    unsigned v = 0;
    if (std::sscanf(hex.c_str() + 2 * i, "%2x", &v) != 1) {
      return core::DataLoss(what + " is not hex at digit " + std::to_string(2 * i));
    }
    p[i] = static_cast<unsigned char>(v);
  }
  return core::Status::Ok();
}

}  // namespace ccltune::worker::nccl

// Hex text of opaque handles (hex_bytes.h).
#include "core/gpu/hex_bytes.h"

namespace ccltune::gpu {
namespace {

int Nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

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
  for (std::size_t i = 0; i < 2 * n; ++i) {
    const int v = Nibble(hex[i]);
    if (v < 0) return core::DataLoss(what + " is not hex at digit " + std::to_string(i));
    p[i / 2] = static_cast<unsigned char>(i % 2 == 0 ? v << 4 : p[i / 2] | v);
  }
  return core::Status::Ok();
}

}  // namespace ccltune::gpu

// Handles travel between ranks as hex text (ncclUniqueId, cudaIpcMemHandle_t): the round
// trip is exact and a damaged string is refused with a message naming the handle.
#include "worker/nccl/gpu_names.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>

namespace ccltune::worker::nccl {
namespace {

TEST(HexBytes, RoundTripsEveryByteValue) {
  std::array<unsigned char, 256> in{};
  for (int i = 0; i < 256; ++i) in[i] = static_cast<unsigned char>(255 - i);
  const std::string hex = HexBytes(in.data(), in.size());
  EXPECT_EQ(hex.size(), 512u);
  EXPECT_EQ(hex.substr(0, 6), "fffefd");
  std::array<unsigned char, 256> out{};
  ASSERT_TRUE(UnhexBytes(hex, out.data(), out.size(), "handle").ok());
  EXPECT_EQ(std::memcmp(in.data(), out.data(), in.size()), 0);
}

TEST(HexBytes, RefusesWrongLengthAndNonHexNamingTheHandle) {
  unsigned char out[4];
  const core::Status short_one = UnhexBytes("abcd", out, 4, "cudaIpcMemHandle");
  EXPECT_FALSE(short_one.ok());
  EXPECT_NE(short_one.message().find("cudaIpcMemHandle has 4 hex digits, want 8"),
            std::string::npos);
  const core::Status bad = UnhexBytes("0011zz33", out, 4, "ncclUniqueId");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("ncclUniqueId is not hex at digit 4"), std::string::npos);
  // A half-valid pair is refused too, not read as a single digit.
  EXPECT_NE(UnhexBytes("00110g33", out, 4, "h").message().find("digit 5"), std::string::npos);
}

}  // namespace
}  // namespace ccltune::worker::nccl

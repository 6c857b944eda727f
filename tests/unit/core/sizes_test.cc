#include "core/base/sizes.h"

#include <gtest/gtest.h>

namespace ccltune::core {
namespace {

TEST(ParseSize, AcceptsBytesAndBinaryUnits) {
  EXPECT_EQ(*ParseSize("4096"), 4096u);
  EXPECT_EQ(*ParseSize("512B"), 512u);
  EXPECT_EQ(*ParseSize("1KiB"), 1024u);
  EXPECT_EQ(*ParseSize("64MiB"), 64ull << 20);
  EXPECT_EQ(*ParseSize("1GiB"), 1ull << 30);
  EXPECT_EQ(*ParseSize("1536KiB"), 1536ull << 10);
}

TEST(ParseSize, RejectsDecimalUnitsWithHint) {
  auto r = ParseSize("1KB");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("use KiB"), std::string::npos) << r.status().message();
  EXPECT_NE(ParseSize("1kb").status().message().find("use KiB"), std::string::npos);
  EXPECT_NE(ParseSize("4MB").status().message().find("use MiB"), std::string::npos);
  EXPECT_NE(ParseSize("1gib").status().message().find("use GiB"), std::string::npos);
}

TEST(ParseSize, RejectsJunk) {
  for (const char* bad : {"", "0", "0KiB", "-1", "-4KiB", "1.5MiB", "abc", "KiB", "1 KiB", "12x",
                          "99999999999999999999", "17179869184GiB", "0x10"}) {
    auto r = ParseSize(bad);
    EXPECT_FALSE(r.ok()) << "'" << bad << "' parsed as " << (r.ok() ? *r : 0);
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("is not a size"), std::string::npos);
    }
  }
}

TEST(FormatSize, IsTheInverseOfParseSize) {
  EXPECT_EQ(FormatSize(1024), "1KiB");
  EXPECT_EQ(FormatSize(64ull << 20), "64MiB");
  EXPECT_EQ(FormatSize(1ull << 30), "1GiB");
  EXPECT_EQ(FormatSize(1536), "1536");
  EXPECT_EQ(FormatSize(3ull << 10), "3KiB");
  for (std::uint64_t b : {1ull, 1000ull, 1536ull, 4096ull, 3ull << 20, 5ull << 30}) {
    EXPECT_EQ(*ParseSize(FormatSize(b)), b) << FormatSize(b);
  }
}

}  // namespace
}  // namespace ccltune::core

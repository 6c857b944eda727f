#include "core/node/fingerprint.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>

#include "tests/support/temp_dir.h"

namespace ccltune::core {
namespace {

FingerprintInput Sample() {
  return {"nccl", "NVIDIA H200", 4, 1, "nvlink-full-mesh", "2.28.3", "13.0", "580.159.04"};
}

// SHA-256 by the coreutils tool, so the check does not reuse our own code.
std::string ShaSumOf(const std::string& data) {
  testing::TempDir dir;
  std::ofstream(dir.File("in"), std::ios::binary) << data;
  std::FILE* p = popen(("sha256sum " + dir.File("in")).c_str(), "r");
  if (p == nullptr) return "";
  std::array<char, 65> buf{};
  const std::size_t n = std::fread(buf.data(), 1, 64, p);
  pclose(p);
  return std::string(buf.data(), n);
}

TEST(Fingerprint, CanonicalJsonIsSortedAndCompact) {
  EXPECT_EQ(CanonicalFingerprintJson(Sample()),
            R"({"backend":"nccl","cudaRuntime":"13.0","driver":"580.159.04",)"
            R"("gpuModel":"NVIDIA H200","gpusPerNode":4,"ncclVersion":"2.28.3",)"
            R"("nodes":1,"p2p":"nvlink-full-mesh"})");
}

TEST(Fingerprint, IsTheSha256PrefixOfTheCanonicalJson) {
  const std::string canonical = CanonicalFingerprintJson(Sample());
  const std::string full = ShaSumOf(canonical);
  ASSERT_EQ(full.size(), 64u);
  EXPECT_EQ(Sha256Hex(canonical), full);
  EXPECT_EQ(Fingerprint(Sample()), full.substr(0, 16));
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Fingerprint, EveryFieldChangesIt) {
  const std::string base = Fingerprint(Sample());
  EXPECT_EQ(Fingerprint(Sample()), base);  // stable
  std::vector<FingerprintInput> variants(8, Sample());
  variants[0].backend = "host";
  variants[1].gpu_model = "NVIDIA H100";
  variants[2].gpus_per_node = 8;
  variants[3].nodes = 2;
  variants[4].p2p_summary = "pcie";
  variants[5].nccl_version = "2.28.9";
  variants[6].cuda_runtime = "12.8";
  variants[7].driver = "570.1";
  for (std::size_t i = 0; i < variants.size(); ++i) {
    EXPECT_NE(Fingerprint(variants[i]), base) << "field " << i;
    EXPECT_EQ(Fingerprint(variants[i]).size(), 16u);
  }
}

}  // namespace
}  // namespace ccltune::core

// DescribeFingerprintGap: the cached fingerprint closest to this communicator's, and the
// fields that differ, named with both values (issue 43).
#include "core/node/fingerprint_gap.h"

#include <gtest/gtest.h>

namespace ccltune::core {
namespace {

const nlohmann::json kMine = {{"backend", "nccl"},      {"cudaRuntime", "13.0"},
                              {"driver", "580.159.04"}, {"gpuModel", "NVIDIA H200"},
                              {"gpusPerNode", 2},       {"ncclVersion", "2.28.9"},
                              {"nodes", 1},             {"p2p", "p2p-full"}};

std::string With(const std::string& field, const nlohmann::json& value) {
  nlohmann::json j = kMine;
  j[field] = value;
  return j.dump();
}

TEST(FingerprintGap, NamesTheFieldThatDiffersWithBothValues) {
  EXPECT_EQ(DescribeFingerprintGap(kMine, {{"5bd942b27c3a99ac", With("ncclVersion", "2.28.3")}}),
            "the cache's closest fingerprint 5bd942b27c3a99ac (of 1) was tuned with ncclVersion "
            "2.28.3 where this process has 2.28.9");
}

TEST(FingerprintGap, PicksTheClosestOfSeveralAndListsEveryDifference) {
  nlohmann::json two = nlohmann::json::parse(With("gpusPerNode", 4));
  two["ncclVersion"] = "2.27.7";
  const std::string gap = DescribeFingerprintGap(
      kMine, {{"aaaa", two.dump()}, {"bbbb", With("driver", "570.1")}, {"cccc", "not json"}});
  EXPECT_EQ(gap,
            "the cache's closest fingerprint bbbb (of 2) was tuned with driver 570.1 where this "
            "process has 580.159.04");
  EXPECT_EQ(DescribeFingerprintGap(kMine, {{"aaaa", two.dump()}}),
            "the cache's closest fingerprint aaaa (of 1) was tuned with gpusPerNode 4, "
            "ncclVersion 2.27.7 where this process has 2, 2.28.9");
}

TEST(FingerprintGap, NothingReadableSaysNothing) {
  EXPECT_EQ(DescribeFingerprintGap(kMine, {}), "");
  EXPECT_EQ(DescribeFingerprintGap(kMine, {{"x", "[1]"}}), "");
}

TEST(FingerprintGap, AFieldOnOneSideOnlyCounts) {
  nlohmann::json older = kMine;
  older.erase("p2p");
  EXPECT_EQ(DescribeFingerprintGap(kMine, {{"old", older.dump()}}),
            "the cache's closest fingerprint old (of 1) was tuned with p2p none where this "
            "process has p2p-full");
}

}  // namespace
}  // namespace ccltune::core

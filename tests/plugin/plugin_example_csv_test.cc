// The exported CSV loaded by NCCL's own example tuner plugin (built by hand outside the
// repository, path in CCLTUNE_NCCL_EXAMPLE_TUNER) selects, for every
// collective and size, the same cost-table entry as our plugin with the same winners, with
// and without NCCL_MIN_CTAS (the CSV exported with the same --min-ctas). Channels: the
// example sets 1 channel for every call unless a row names a count, so only rows with a
// count are compared. Skips when the example plugin is not given.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/plugin/scoped_env.h"
#include "tests/plugin/tuner_harness.h"
#include "tests/support/temp_dir.h"
#include "worker/export/nccl_tuner_csv.h"

namespace ccltune::testing {
namespace {

namespace abi = apply::abi;
using core::Dtype;
using core::Op;

std::pair<int, int> Argmin(const CostTable& t) {
  std::pair<int, int> best{-1, -1};
  for (int a = 0; a < abi::kNumAlgorithms; ++a)
    for (int p = 0; p < abi::kNumProtocols; ++p)
      if (t.cost[a][p] >= 0 && (best.first < 0 || t.cost[a][p] < t.cost[best.first][best.second]))
        best = {a, p};
  return best;
}

// Both plugins over the same winners, ours under NCCL_MIN_CTAS=ceiling (0: unset) and
// theirs reading the CSV exported with --min-ctas ceiling.
void CompareSelections(const LoadedTuner& ours, const abi::TunerV5& theirs,
                       const std::vector<core::ResultRecord>& records, const std::string& fp,
                       int ceiling) {
  TempDir dir("ccltune-example");
  nlohmann::json array = nlohmann::json::array();
  for (const auto& r : records) array.push_back(core::ToJson(r));
  std::ofstream(dir.File("w.json")) << array.dump();
  std::ofstream(dir.File("w.csv"))
      << worker::exporting::NcclTunerCsv(records, fp, 1, std::nullopt, ceiling);
  ScopedEnv env({{"CCLTUNE_RESULTS_FILE", dir.File("w.json")},
                 {"NCCL_MIN_CTAS", ceiling > 0 ? std::to_string(ceiling) : ""},
                 {"NCCL_TUNER_CONFIG_FILE", dir.File("w.csv")}});
  void *our_ctx = nullptr, *their_ctx = nullptr;
  ASSERT_EQ(ours.v5().init(&our_ctx, 1, 4, 1, PluginLogger(), nullptr, nullptr), 0);
  ASSERT_EQ(theirs.init(&their_ctx, 1, 4, 1, PluginLogger(), nullptr, nullptr), 0);
  int compared = 0, forced = 0;
  for (int coll :
       {abi::kFuncBroadcast, abi::kFuncAllGather, abi::kFuncReduceScatter, abi::kFuncAllReduce}) {
    for (std::uint64_t n = 1; n < (1ull << 33); n = n * 6 / 5 + 1) {
      CostTable a, b;
      int ca = 0, cb = 0;
      ours.v5().getCollInfo(our_ctx, coll, n, 1, a.raw(), 7, 3, 0, &ca);
      theirs.getCollInfo(their_ctx, coll, n, 1, b.raw(), 7, 3, 0, &cb);
      ASSERT_EQ(Argmin(a), Argmin(b)) << "coll " << coll << " bytes " << n;
      if (ca > 0) EXPECT_EQ(ca, cb) << "coll " << coll << " bytes " << n;
      forced += !a.Untouched();
      ++compared;
    }
  }
  EXPECT_GT(forced, compared / 10);  // the comparison covered forced sizes, not only defaults
  ours.v5().finalize(our_ctx);
  theirs.finalize(their_ctx);
}

TEST(ExampleTunerCsv, SameSelectionAsOurPlugin) {
  const char* example = std::getenv("CCLTUNE_NCCL_EXAMPLE_TUNER");
  if (example == nullptr || *example == '\0')
    GTEST_SKIP() << "CCLTUNE_NCCL_EXAMPLE_TUNER is not set (build NCCL's example plugin from "
                    "plugins/tuner/example of an NCCL checkout, outside this repository)";
  LoadedTuner ours(std::getenv("CCLTUNE_PLUGIN_SO"));
  ASSERT_TRUE(ours.ok()) << ours.error();
  void* handle = dlopen(example, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  const auto* theirs = static_cast<const abi::TunerV5*>(dlsym(handle, "ncclTunerPlugin_v5"));
  ASSERT_NE(theirs, nullptr);
  const std::string fp = ExpectedFingerprint(4);
  constexpr std::uint64_t K = 1024, M = K * K;
  const std::vector<core::ResultRecord> records{
      MakeRecord(fp, Op::kAllReduce, Dtype::kBf16, 1 * K, "nccl:algo=tree,proto=ll"),
      MakeRecord(fp, Op::kAllReduce, Dtype::kBf16, 64 * K, "nccl:algo=ring,ctas=8,proto=ll128"),
      MakeRecord(fp, Op::kAllReduce, Dtype::kBf16, 1 * M, "oneshot:blocks=8,threads=512"),
      MakeRecord(fp, Op::kAllReduce, Dtype::kBf16, 16 * M, "nccl"),
      MakeRecord(fp, Op::kAllReduce, Dtype::kBf16, 64 * M, "nccl:algo=ring,proto=simple"),
      MakeRecord(fp, Op::kAllGather, Dtype::kFp32, 4 * K, "nccl:algo=ring,proto=ll"),
      MakeRecord(fp, Op::kAllGather, Dtype::kFp32, 4 * M, "nccl:algo=ring,proto=simple"),
      MakeRecord(fp, Op::kBroadcast, Dtype::kInt8, 8 * K, "nccl:algo=ring,proto=ll128"),
  };
  for (int ceiling : {0, 8}) {
    SCOPED_TRACE("NCCL_MIN_CTAS / --min-ctas " + std::to_string(ceiling));
    CompareSelections(ours, *theirs, records, fp, ceiling);
  }
  dlclose(handle);
}

}  // namespace
}  // namespace ccltune::testing

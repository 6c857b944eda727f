// Issue 7 through the real .so: a `nccl:ctas=32` winner was measured on a communicator
// with 32 channels, which a tuner can only count on when NCCL_MIN_CTAS=32 is set. Without
// it the plugin forces the fastest reproducible measured choice (algo/proto, no channels),
// says so once per size at init, and names the applied choice in its per-call trace.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/plugin/scoped_env.h"
#include "tests/plugin/tuner_harness.h"
#include "tests/support/temp_dir.h"

namespace ccltune::testing {
namespace {

namespace abi = apply::abi;
constexpr std::uint64_t MiB = 1024 * 1024;

core::ResultRecord Ctas32Record(const std::string& fp, std::uint64_t bytes,
                                const std::string& fallback, double fallback_us, double nccl_us) {
  auto r = MakeRecord(fp, core::Op::kAllReduce, core::Dtype::kBf16, bytes, "nccl:ctas=32");
  auto choice = [](const std::string& name, double us, core::ChoiceStatus status) {
    return core::ChoiceResult{name, nlohmann::json::object(), us, us, us, 1.0, status, ""};
  };
  r.choices = {choice("nccl", nccl_us, core::ChoiceStatus::kOk),
               choice("nccl:algo=tree,proto=ll", nccl_us * 0.5, core::ChoiceStatus::kWrong),
               choice(fallback, fallback_us, core::ChoiceStatus::kOk),
               choice("nccl:ctas=16", fallback_us * 0.99, core::ChoiceStatus::kOk),
               choice("nccl:ctas=32", fallback_us * 0.98, core::ChoiceStatus::kOk),
               choice("nccl-symm", nccl_us * 0.3, core::ChoiceStatus::kOk)};
  r.time_us = fallback_us * 0.98;
  return r;
}

struct Asked {
  std::pair<int, int> forced;
  bool untouched;
  int channels;
};

class PluginCtasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(tuner_.ok()) << tuner_.error();
    Write({Ctas32Record(fp_, 1 * MiB, "nccl:algo=ring,proto=ll128", 17.90, 19.70),
           Ctas32Record(fp_, 4 * MiB, "nccl:algo=ring,proto=simple", 37.00, 43.00)});
    ClearPluginLog();
  }
  void Write(const std::vector<core::ResultRecord>& records) {
    nlohmann::json array = nlohmann::json::array();
    for (const auto& r : records) array.push_back(core::ToJson(r));
    std::ofstream(dir_.File("winners.json")) << array.dump();
  }
  Asked Ask(void* ctx, std::uint64_t bytes) {
    CostTable table;
    int channels = 0;
    EXPECT_EQ(tuner_.v5().getCollInfo(ctx, abi::kFuncAllReduce, bytes, 1, table.raw(),
                                      abi::kNumAlgorithms, abi::kNumProtocols, 0, &channels),
              abi::kSuccess);
    return {table.Forced(), table.Untouched(), channels};
  }
  // Lines at `level` that contain `needle`.
  static int Count(int level, const std::string& needle) {
    int n = 0;
    for (const auto& l : PluginLog())
      n += l.level == level && l.text.find(needle) != std::string::npos;
    return n;
  }
  // Without a usable NCCL_MIN_CTAS: each size's fallback algo/proto, never 32 channels.
  void ExpectFallbacks(void* ctx) {
    auto a = Ask(ctx, 1 * MiB);
    EXPECT_EQ(a.forced, std::make_pair(abi::kAlgoRing, abi::kProtoLL128)) << PluginLogText();
    EXPECT_EQ(a.channels, 0);
    a = Ask(ctx, 5 * MiB);  // nearest: 4 MiB
    EXPECT_EQ(a.forced, std::make_pair(abi::kAlgoRing, abi::kProtoSimple)) << PluginLogText();
    EXPECT_EQ(a.channels, 0);
  }

  LoadedTuner tuner_{std::getenv("CCLTUNE_PLUGIN_SO") ? std::getenv("CCLTUNE_PLUGIN_SO") : ""};
  std::string fp_ = ExpectedFingerprint(4);
  TempDir dir_{"ccltune-plugin-ctas"};
};

TEST_F(PluginCtasTest, WithoutNcclMinCtasTheFallbackIsForced) {
  ScopedEnv env({{"CCLTUNE_RESULTS_FILE", dir_.File("winners.json")}});
  auto init = InitV5(tuner_, 4, 1);
  ASSERT_NE(init.ctx, nullptr) << PluginLogText();
  EXPECT_LT(init.took.count(), 200);
  ExpectFallbacks(init.ctx);
  EXPECT_EQ(Count(abi::kLogInfo,
                  "allReduce bf16/sum 1048576 B: winner nccl:ctas=32 needs >= 32 channels (set "
                  "NCCL_MIN_CTAS=32); applying nccl:algo=ring,proto=ll128 (17.90 us vs nccl "
                  "19.70 us)"),
            1)
      << PluginLogText();
  EXPECT_EQ(Count(abi::kLogInfo, "4194304 B: winner nccl:ctas=32 needs >= 32 channels"), 1);
  EXPECT_EQ(Count(abi::kLogInfo, "2 sizes (2 forced, 2 substituted)"), 1) << PluginLogText();
  EXPECT_EQ(Count(abi::kLogTrace, "winner nccl:ctas=32, applied nccl:algo=ring,proto=ll128"), 1)
      << PluginLogText();
  tuner_.v5().finalize(init.ctx);
}

TEST_F(PluginCtasTest, WithNcclMinCtasTheWinnersChannelsAreForced) {
  ScopedEnv env({{"CCLTUNE_RESULTS_FILE", dir_.File("winners.json")}, {"NCCL_MIN_CTAS", "32"}});
  auto init = InitV5(tuner_, 4, 1);
  ASSERT_NE(init.ctx, nullptr) << PluginLogText();
  for (std::uint64_t bytes : {1 * MiB, 4 * MiB}) {
    const auto a = Ask(init.ctx, bytes);
    EXPECT_TRUE(a.untouched) << bytes;  // ctas only: NCCL picks algorithm and protocol
    EXPECT_EQ(a.channels, 32) << bytes;
  }
  EXPECT_EQ(Count(abi::kLogInfo, "needs >= 32 channels"), 0) << PluginLogText();
  EXPECT_EQ(Count(abi::kLogTrace, "winner nccl:ctas=32, applied nccl:ctas=32"), 2);
  tuner_.v5().finalize(init.ctx);
}

TEST_F(PluginCtasTest, MalformedNcclMinCtasWarnsAndCountsAsUnset) {
  ScopedEnv env(
      {{"CCLTUNE_RESULTS_FILE", dir_.File("winners.json")}, {"NCCL_MIN_CTAS", "thirty-two"}});
  auto init = InitV5(tuner_, 4, 1);
  ASSERT_NE(init.ctx, nullptr) << PluginLogText();
  EXPECT_EQ(Count(abi::kLogWarn,
                  "NCCL_MIN_CTAS: 'thirty-two' is not a channel count: allowed "
                  "are 0 (unknown) or a positive integer"),
            1)
      << PluginLogText();
  ExpectFallbacks(init.ctx);
  tuner_.v5().finalize(init.ctx);
}

TEST_F(PluginCtasTest, SubstitutionLinesAreBounded) {
  std::vector<core::ResultRecord> many;
  for (int i = 0; i < 20; ++i)
    many.push_back(Ctas32Record(fp_, (1ull << 10) << i, "nccl:algo=ring,proto=ll128", 9, 10));
  Write(many);
  ScopedEnv env({{"CCLTUNE_RESULTS_FILE", dir_.File("winners.json")}});
  auto init = InitV5(tuner_, 4, 1);
  ASSERT_NE(init.ctx, nullptr) << PluginLogText();
  EXPECT_EQ(Count(abi::kLogInfo, "needs >= 32 channels"), 16) << PluginLogText();
  EXPECT_EQ(Count(abi::kLogInfo, "and 4 more sizes substituted"), 1) << PluginLogText();
  tuner_.v5().finalize(init.ctx);
}

}  // namespace
}  // namespace ccltune::testing

// The plugin applies a real published set: dlopen()ed and called as NCCL calls it, with
// winners from a real redis-server (published by core::ResultStore, as the worker does)
// or from the file `ccltune export --format json` writes; ctas winners only with the
// channels NCCL_MIN_CTAS guarantees, else the fastest reproducible measured choice.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>

#include "core/results/result_store.h"
#include "tests/plugin/scoped_env.h"
#include "tests/plugin/tuner_harness.h"
#include "tests/support/redis_server.h"
#include "tests/support/temp_dir.h"

namespace ccltune::testing {
namespace {

using core::Dtype;
using core::Op;
namespace abi = apply::abi;
constexpr std::uint64_t KiB = 1024, MiB = 1024 * 1024;

std::vector<core::ResultRecord> PublishedSet(const std::string& fp) {
  return {
      MakeRecord(fp, Op::kAllReduce, Dtype::kBf16, 1 * KiB, "nccl:algo=tree,proto=ll"),
      MakeRecord(fp, Op::kAllReduce, Dtype::kBf16, 64 * KiB, "nccl:algo=ring,ctas=8,proto=ll128"),
      MakeRecord(fp, Op::kAllReduce, Dtype::kBf16, 1 * MiB, "oneshot:blocks=8,threads=512"),
      MakeRecord(fp, Op::kAllReduce, Dtype::kBf16, 16 * MiB, "nccl"),
      MakeRecord(fp, Op::kAllReduce, Dtype::kBf16, 64 * MiB, "nccl:ctas=16"),
      // fp32 disagrees: bf16 is preferred unless CCLTUNE_PLUGIN_DTYPE says fp32.
      MakeRecord(fp, Op::kAllReduce, Dtype::kFp32, 1 * KiB, "nccl:algo=ring,proto=simple"),
      MakeRecord(fp, Op::kAllGather, Dtype::kFp32, 4 * KiB, "nccl:algo=ring,proto=ll"),
      MakeRecord(fp, Op::kAllGather, Dtype::kFp32, 4 * MiB, "nccl:algo=tree,proto=simple"),
      MakeRecord(fp, Op::kReduceScatter, Dtype::kBf16, 4 * MiB, "nccl-symm"),
  };
}

struct Call {
  int coll;
  std::uint64_t bytes;
};
struct Outcome {
  std::pair<int, int> forced;
  bool untouched;
  int channels;
};

Outcome Ask(const LoadedTuner& t, void* ctx, Call c) {
  CostTable table;
  int channels = 0;
  EXPECT_EQ(t.v5().getCollInfo(ctx, c.coll, c.bytes, 1, table.raw(), abi::kNumAlgorithms,
                               abi::kNumProtocols, 0, &channels),
            abi::kSuccess);
  return {table.Forced(), table.Untouched(), channels};
}

class PluginApplyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(tuner_.ok()) << tuner_.error();
    auto server = RedisServer::Start();
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    auto redis = core::RedisClient::Connect(server_->endpoint());
    ASSERT_TRUE(redis.ok()) << redis.status().ToString();
    core::ResultStore store(**redis);
    ASSERT_TRUE(store.Publish(fp_, ExpectedFingerprintJson(4), PublishedSet(fp_)).ok());
    ClearPluginLog();
  }

  // Every expectation of the published set for bf16 allReduce and fp32 allGather, with
  // NCCL_MIN_CTAS=16 (every ctas winner reproducible) or unset (none is; MakeRecord's
  // records measured only nccl besides the winner, so NCCL decides those sizes).
  void ExpectBf16Winners(void* ctx, bool ctas_reproducible) {
    auto o = Ask(tuner_, ctx, {abi::kFuncAllReduce, 3 * KiB});  // nearest: 1 KiB
    EXPECT_EQ(o.forced, std::make_pair(abi::kAlgoTree, abi::kProtoLL)) << PluginLogText();
    EXPECT_EQ(o.channels, 0);
    o = Ask(tuner_, ctx, {abi::kFuncAllReduce, 200 * KiB});  // nearest: 64 KiB, ctas=8
    if (ctas_reproducible) {
      EXPECT_EQ(o.forced, std::make_pair(abi::kAlgoRing, abi::kProtoLL128));
      EXPECT_EQ(o.channels, 8);
    } else {
      EXPECT_TRUE(o.untouched);
      EXPECT_EQ(o.channels, 0);
    }
    o = Ask(tuner_, ctx, {abi::kFuncAllReduce, 600 * KiB});  // nearest: 1 MiB, oneshot
    EXPECT_TRUE(o.untouched);
    EXPECT_EQ(o.channels, 0);
    o = Ask(tuner_, ctx, {abi::kFuncAllReduce, 16 * MiB});  // "nccl": NCCL's own choice
    EXPECT_TRUE(o.untouched);
    o = Ask(tuner_, ctx, {abi::kFuncAllReduce, 1ull << 40});  // nearest: 64 MiB, ctas only
    EXPECT_TRUE(o.untouched);
    EXPECT_EQ(o.channels, ctas_reproducible ? 16 : 0);
    o = Ask(tuner_, ctx, {abi::kFuncAllGather, 1});  // nearest: 4 KiB (fp32 only dtype)
    EXPECT_EQ(o.forced, std::make_pair(abi::kAlgoRing, abi::kProtoLL));
    o = Ask(tuner_, ctx, {abi::kFuncReduceScatter, 4 * MiB});  // nccl-symm: not NCCL's tuner
    EXPECT_TRUE(o.untouched);
    o = Ask(tuner_, ctx, {abi::kFuncBroadcast, 4 * MiB});  // nothing tuned
    EXPECT_TRUE(o.untouched);
    o = Ask(tuner_, ctx, {abi::kFuncReduce, 4 * MiB});
    EXPECT_TRUE(o.untouched);
  }

  LoadedTuner tuner_{std::getenv("CCLTUNE_PLUGIN_SO") ? std::getenv("CCLTUNE_PLUGIN_SO") : ""};
  std::unique_ptr<RedisServer> server_;
  std::string fp_ = ExpectedFingerprint(4);
};

TEST_F(PluginApplyTest, RedisWinnersForceTheNearestBucketsEntry) {
  ScopedEnv env({{"CCLTUNE_REDIS_URL", server_->url()}, {"NCCL_MIN_CTAS", "16"}});
  auto init = InitV5(tuner_, 4, 1);
  ASSERT_EQ(init.rc, abi::kSuccess);
  ASSERT_NE(init.ctx, nullptr);
  EXPECT_LT(init.took.count(), 200) << PluginLogText();
  EXPECT_NE(PluginLogText().find(fp_), std::string::npos) << PluginLogText();
  ExpectBf16Winners(init.ctx, /*ctas_reproducible=*/true);
  EXPECT_EQ(tuner_.v5().finalize(init.ctx), abi::kSuccess);
}

TEST_F(PluginApplyTest, WithoutNcclMinCtasNoCtasWinnerIsForced) {
  ScopedEnv env({{"CCLTUNE_REDIS_URL", server_->url()}});
  auto init = InitV5(tuner_, 4, 1);
  ASSERT_NE(init.ctx, nullptr);
  ExpectBf16Winners(init.ctx, /*ctas_reproducible=*/false);
  EXPECT_NE(PluginLogText().find("65536 B: winner nccl:algo=ring,ctas=8,proto=ll128 needs >= 8 "
                                 "channels (set NCCL_MIN_CTAS=8); applying nccl (12.00 us; no "
                                 "other reproducible choice was measured)"),
            std::string::npos)
      << PluginLogText();
  tuner_.v5().finalize(init.ctx);
}

TEST_F(PluginApplyTest, TreeRuledOutByNcclIsLeftAlone) {
  ScopedEnv env({{"CCLTUNE_REDIS_URL", server_->url()}});
  auto init = InitV5(tuner_, 4, 1);
  CostTable table;
  for (auto& c : table.cost[abi::kAlgoTree]) c = -1.0f;  // e.g. allGather has no tree
  const CostTable before = table;
  int channels = 0;
  tuner_.v5().getCollInfo(init.ctx, abi::kFuncAllGather, 4 * MiB, 1, table.raw(),
                          abi::kNumAlgorithms, abi::kNumProtocols, 0, &channels);
  EXPECT_EQ(std::memcmp(table.cost, before.cost, sizeof(table.cost)), 0);
  tuner_.v5().finalize(init.ctx);
}

TEST_F(PluginApplyTest, PinnedDtypeSelectsItsRecords) {
  ScopedEnv env({{"CCLTUNE_REDIS_URL", server_->url()}, {"CCLTUNE_PLUGIN_DTYPE", "fp32"}});
  auto init = InitV5(tuner_, 4, 1);
  auto o = Ask(tuner_, init.ctx, {abi::kFuncAllReduce, 64 * MiB});  // fp32 has only 1 KiB
  EXPECT_EQ(o.forced, std::make_pair(abi::kAlgoRing, abi::kProtoSimple)) << PluginLogText();
  tuner_.v5().finalize(init.ctx);
}

TEST_F(PluginApplyTest, UnknownDtypeIsAnErrorAndTheTunerStaysInactive) {
  ScopedEnv env({{"CCLTUNE_REDIS_URL", server_->url()}, {"CCLTUNE_PLUGIN_DTYPE", "float"}});
  auto init = InitV5(tuner_, 4, 1);
  EXPECT_EQ(init.rc, abi::kSuccess);
  EXPECT_TRUE(Ask(tuner_, init.ctx, {abi::kFuncAllReduce, 1 * KiB}).untouched);
  EXPECT_NE(PluginLogText().find("CCLTUNE_PLUGIN_DTYPE"), std::string::npos) << PluginLogText();
  tuner_.v5().finalize(init.ctx);
}

TEST_F(PluginApplyTest, OtherShapeHasAnotherFingerprintAndGetsNothing) {
  ScopedEnv env({{"CCLTUNE_REDIS_URL", server_->url()}});
  auto init = InitV5(tuner_, 8, 1);  // 8 ranks: not what was tuned
  EXPECT_TRUE(Ask(tuner_, init.ctx, {abi::kFuncAllReduce, 1 * KiB}).untouched);
  tuner_.v5().finalize(init.ctx);
}

TEST_F(PluginApplyTest, ResultsFileAppliesTheSameWinnersThroughV4) {
  TempDir dir("ccltune-plugin");
  nlohmann::json array = nlohmann::json::array();
  for (const auto& r : PublishedSet(fp_)) array.push_back(core::ToJson(r));
  std::ofstream(dir.File("winners.json")) << array.dump(2);
  ScopedEnv env({{"CCLTUNE_RESULTS_FILE", dir.File("winners.json")}});
  void* ctx = nullptr;
  ASSERT_EQ(tuner_.v4().init(4, 1, PluginLogger(), &ctx), abi::kSuccess);
  ASSERT_NE(ctx, nullptr);
  ExpectBf16Winners(ctx, /*ctas_reproducible=*/false);
  EXPECT_EQ(tuner_.v4().destroy(ctx), abi::kSuccess);
}

}  // namespace
}  // namespace ccltune::testing

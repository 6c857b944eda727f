// Loading a communicator's winners the way the runtime does at init (apply::LoadWinners
// with the runtime's resolved settings): from a real redis-server that `ccltune tune`'s
// ResultStore published into, from an exported results file, another fingerprint's
// records, and an unreachable cache within its bound. Then the table built from them.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "core/apply/winner_loader.h"
#include "core/node/fingerprint_gap.h"
#include "core/results/result_store.h"
#include "runtime/dispatch_table.h"
#include "runtime/runtime_config.h"
#include "tests/plugin/scoped_env.h"
#include "tests/support/free_port.h"
#include "tests/support/redis_server.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/runtime/record_builder.h"

namespace ccltune::runtime {
namespace {

using ccltune::testing::ScopedEnv;
using core::Dtype;
using core::Op;
using core::RedOp;

constexpr const char* kFp = "0123456789abcdef";
constexpr const char* kLL = "oneshot:blocks=64,threads=256,mode=ll";

std::vector<core::ResultRecord> Published() {
  return {
      MakeResult(Op::kAllReduce, Dtype::kBf16, RedOp::kSum, 1024, 2, {{"nccl", 6.0}, {kLL, 2.9}}),
      MakeResult(Op::kAllReduce, Dtype::kBf16, RedOp::kSum, 64 << 20, 2,
                 {{"nccl", 244.0}, {"nccl:ctas=16", 240.0}})};
}

core::Result<apply::ParsedFile> Load(const std::string& fp) {
  CCLTUNE_ASSIGN_OR_RETURN(RuntimeConfig cfg, ResolveConfig(nullptr));
  return apply::LoadWinners(cfg.source, fp,
                            std::chrono::steady_clock::now() + cfg.source.load_timeout);
}

TEST(WinnerLoading, FromTheSharedCache) {
  auto redis = ccltune::testing::RedisServer::Start();
  ASSERT_TRUE(redis.ok()) << redis.status().ToString();
  auto client = core::RedisClient::Connect((*redis)->endpoint());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  core::ResultStore store(**client);
  ASSERT_TRUE(store.Publish(kFp, "{}", Published()).ok());
  ScopedEnv env({{"CCLTUNE_REDIS_URL", (*redis)->url()}, {"CCLTUNE_PLUGIN_TIMEOUT_MS", "2000"}});
  auto loaded = Load(kFp);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(loaded->records.size(), 2u);
  const DispatchTable t = DispatchTable::Build(loaded->records, Capabilities{2, ""});
  EXPECT_EQ(t.Choose(Op::kAllReduce, Dtype::kBf16, RedOp::kSum, 1500, BufferClass::kPlain).name,
            kLL);
  EXPECT_EQ(t.Choose(Op::kAllReduce, Dtype::kBf16, RedOp::kSum, 48 << 20, BufferClass::kPlain).name,
            "nccl");  // ctas=16 is within the 3 % noise threshold: the winner is nccl
  // Another fingerprint's communicator finds nothing: the runtime then runs NCCL.
  auto other = Load("fedcba9876543210");
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_TRUE(other->records.empty());
}

// Nothing tuned under the communicator's fingerprint: the loader brings back the cache's
// fingerprints and their inputs, so the one log line can name what differs (issue 43).
TEST(WinnerLoading, NoWinnersBringsTheCachedFingerprintsInputs) {
  auto redis = ccltune::testing::RedisServer::Start();
  ASSERT_TRUE(redis.ok()) << redis.status().ToString();
  auto client = core::RedisClient::Connect((*redis)->endpoint());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  const std::string tuned = R"({"backend":"nccl","ncclVersion":"2.28.3","nodes":1})";
  ASSERT_TRUE(core::ResultStore(**client).Publish(kFp, tuned, Published()).ok());
  ScopedEnv env({{"CCLTUNE_REDIS_URL", (*redis)->url()}, {"CCLTUNE_PLUGIN_TIMEOUT_MS", "2000"}});
  auto loaded = Load("fedcba9876543210");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(loaded->records.empty());
  ASSERT_EQ(loaded->other_fingerprints.size(), 1u);
  EXPECT_EQ(loaded->other_fingerprints[0].first, kFp);
  EXPECT_EQ(loaded->other_fingerprints[0].second, tuned);
  // What the runtime's line then says.
  const nlohmann::json mine = {{"backend", "nccl"}, {"ncclVersion", "2.28.9"}, {"nodes", 1}};
  EXPECT_EQ(core::DescribeFingerprintGap(mine, loaded->other_fingerprints),
            std::string("the cache's closest fingerprint ") + kFp +
                " (of 1) was tuned with ncclVersion 2.28.3 where this process has 2.28.9");
  // Its own fingerprint's winners come without that list.
  auto own = Load(kFp);
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_EQ(own->records.size(), 2u);
  EXPECT_TRUE(own->other_fingerprints.empty());
}

// All-reduce + epilogue winners come from the cache too: the fingerprint's epilogue set
// leads the reader to their index keys, and a record under another epilogue's key is
// rejected as corrupt.
TEST(WinnerLoading, EpilogueWinnersFromTheSharedCache) {
  auto redis = ccltune::testing::RedisServer::Start();
  ASSERT_TRUE(redis.ok()) << redis.status().ToString();
  auto client = core::RedisClient::Connect((*redis)->endpoint());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  const core::Epilogue norm{core::EpilogueKind::kResidualRmsNorm, 4096, 1e-5};
  const char* fused = "oneshot-fused:blocks=16,mode=ll,threads=512";
  std::vector<core::ResultRecord> records = Published();
  for (std::uint64_t tokens : {1, 128}) {
    records.push_back(MakeResult(Op::kAllReduce, Dtype::kBf16, RedOp::kSum, tokens * 4096 * 2, 2,
                                 {{"nccl", 14.0}, {fused, 5.0}}));
    records.back().epilogue = norm;
  }
  core::ResultStore store(**client);
  ASSERT_TRUE(store.Publish(kFp, "{}", records).ok());
  EXPECT_EQ((*client)->Command({"SMEMBERS", core::EpiloguesKey(kFp)})->elements.size(), 1u);
  ScopedEnv env({{"CCLTUNE_REDIS_URL", (*redis)->url()}, {"CCLTUNE_PLUGIN_TIMEOUT_MS", "2000"}});
  auto loaded = Load(kFp);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(loaded->records.size(), 4u);
  EXPECT_EQ(loaded->rejected, 0u);
  const DispatchTable t = DispatchTable::Build(loaded->records, Capabilities{2, ""});
  EXPECT_EQ(
      t.Choose(Op::kAllReduce, Dtype::kBf16, RedOp::kSum, 8 * 4096 * 2, BufferClass::kPooled, norm)
          .name,
      fused);
  // The plain slice is untouched by the epilogue records.
  EXPECT_EQ(t.Choose(Op::kAllReduce, Dtype::kBf16, RedOp::kSum, 1500, BufferClass::kPlain).name,
            kLL);
  // A record whose body says another epilogue than its key: a corrupt cache, rejected.
  auto bad = records[3];
  bad.epilogue.hidden = 8192;
  ASSERT_TRUE(
      (*client)
          ->Command({"SET", core::ResultKey(kFp, records[3].Key()), core::ToJson(bad).dump()})
          .ok());
  auto again = Load(kFp);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->rejected, 1u);
  EXPECT_NE(again->first_error.find("another problem"), std::string::npos) << again->first_error;
}

TEST(WinnerLoading, FromAnExportedFileOnlyThisFingerprint) {
  ccltune::testing::TempDir dir("ccltune-runtime");
  std::vector<core::ResultRecord> records = Published();
  records.push_back(records[0]);
  records.back().fingerprint = "ffffffffffffffff";
  records.back().winner = "nccl";
  nlohmann::json array = nlohmann::json::array();
  for (const auto& r : records) array.push_back(core::ToJson(r));
  const std::string path = (dir.path() / "winners.json").string();
  std::ofstream(path) << array.dump();
  ScopedEnv env({{"CCLTUNE_RESULTS_FILE", path}});
  auto loaded = Load(kFp);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(loaded->records.size(), 2u);
  for (const auto& r : loaded->records) EXPECT_EQ(r.fingerprint, kFp);
}

TEST(WinnerLoading, UnreachableCacheGivesUpWithinTheBound) {
  const int port = ccltune::testing::FreePort();  // nothing listens there
  ScopedEnv env({{"CCLTUNE_REDIS_URL", "redis://127.0.0.1:" + std::to_string(port) + "/0"},
                 {"CCLTUNE_PLUGIN_TIMEOUT_MS", "200"}});
  const auto start = std::chrono::steady_clock::now();
  auto loaded = Load(kFp);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(loaded.ok());
  EXPECT_LT(took, std::chrono::seconds(2));
}

TEST(WinnerLoading, NoSourceIsNotFound) {
  ScopedEnv env({});
  auto loaded = Load(kFp);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), core::StatusCode::kNotFound);
}

}  // namespace
}  // namespace ccltune::runtime

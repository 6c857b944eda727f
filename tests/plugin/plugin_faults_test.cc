// Whatever the cache does, the plugin returns ncclSuccess from init within 200 ms and
// leaves NCCL's cost table as NCCL made it: a missing Redis (connection refused), a Redis
// that accepts and never answers, and corrupt records (garbage, wrong schema, wrong types,
// huge values, records that contradict their key, deep nesting).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "core/results/result_store.h"
#include "tests/plugin/scoped_env.h"
#include "tests/plugin/silent_listener.h"
#include "tests/plugin/tuner_harness.h"
#include "tests/support/free_port.h"
#include "tests/support/redis_server.h"
#include "tests/support/temp_dir.h"

namespace ccltune::testing {
namespace {

namespace abi = apply::abi;
constexpr int kInitBudgetMs = 200;

std::string PluginPath() {
  const char* p = std::getenv("CCLTUNE_PLUGIN_SO");
  return p ? p : "";
}

// Init must succeed in time, every call must leave the table as NCCL made it.
void ExpectNcclDefaults(const LoadedTuner& t) {
  auto init = InitV5(t, 4, 1);
  EXPECT_EQ(init.rc, abi::kSuccess);
  EXPECT_LT(init.took.count(), kInitBudgetMs) << PluginLogText();
  for (std::uint64_t bytes : {1ull, 1024ull, 65536ull, 1ull << 20, 1ull << 26, 1ull << 40}) {
    for (int coll :
         {abi::kFuncBroadcast, abi::kFuncAllGather, abi::kFuncReduceScatter, abi::kFuncAllReduce}) {
      CostTable table;
      int channels = 0;
      EXPECT_EQ(t.v5().getCollInfo(init.ctx, coll, bytes, 1, table.raw(), abi::kNumAlgorithms,
                                   abi::kNumProtocols, 0, &channels),
                abi::kSuccess);
      EXPECT_TRUE(table.Untouched()) << "coll " << coll << " bytes " << bytes;
      EXPECT_EQ(channels, 0);
    }
  }
  EXPECT_EQ(t.v5().finalize(init.ctx), abi::kSuccess);
}

bool Logged(int level, const std::string& needle) {
  for (const auto& l : PluginLog())
    if (l.level == level && l.text.find(needle) != std::string::npos) return true;
  return false;
}

class PluginFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(tuner_.ok()) << tuner_.error();
    ClearPluginLog();
  }
  LoadedTuner tuner_{PluginPath()};
};

TEST_F(PluginFaultsTest, NoSourceConfiguredMeansNcclDefaults) {
  ScopedEnv env({});
  ExpectNcclDefaults(tuner_);
  EXPECT_TRUE(Logged(abi::kLogInfo, "neither CCLTUNE_RESULTS_FILE nor CCLTUNE_REDIS_URL"))
      << PluginLogText();
}

TEST_F(PluginFaultsTest, ConnectionRefused) {
  const int port = FreePort();  // nothing listens there
  ASSERT_GT(port, 0);
  ScopedEnv env({{"CCLTUNE_REDIS_URL", "redis://127.0.0.1:" + std::to_string(port) + "/0"}});
  ExpectNcclDefaults(tuner_);
  EXPECT_TRUE(Logged(abi::kLogWarn, "127.0.0.1:" + std::to_string(port))) << PluginLogText();
}

TEST_F(PluginFaultsTest, RedisThatNeverAnswersCostsAtMostTheTimeout) {
  SilentListener silent;
  ASSERT_GT(silent.port(), 0);
  ScopedEnv env({{"CCLTUNE_REDIS_URL", "redis://127.0.0.1:" + std::to_string(silent.port())}});
  ExpectNcclDefaults(tuner_);
  EXPECT_GE(silent.accepted(), 1);  // it did connect; the read is what hung
  EXPECT_TRUE(Logged(abi::kLogWarn, "NCCL's own choices")) << PluginLogText();
}

TEST_F(PluginFaultsTest, ShorterConfiguredTimeoutIsHonoured) {
  SilentListener silent;
  ScopedEnv env({{"CCLTUNE_REDIS_URL", "redis://127.0.0.1:" + std::to_string(silent.port())},
                 {"CCLTUNE_PLUGIN_TIMEOUT_MS", "20"}});
  auto init = InitV5(tuner_, 4, 1);
  EXPECT_LT(init.took.count(), 90) << PluginLogText();  // the default would be >= 100
  tuner_.v5().finalize(init.ctx);
}

TEST_F(PluginFaultsTest, BadTimeoutValueIsAnErrorNamingTheVariable) {
  ScopedEnv env(
      {{"CCLTUNE_REDIS_URL", "redis://127.0.0.1:1"}, {"CCLTUNE_PLUGIN_TIMEOUT_MS", "1s"}});
  ExpectNcclDefaults(tuner_);
  EXPECT_TRUE(Logged(abi::kLogWarn, "CCLTUNE_PLUGIN_TIMEOUT_MS='1s'")) << PluginLogText();
}

TEST_F(PluginFaultsTest, BadRedisUrlIsLoggedNotFatal) {
  ScopedEnv env({{"CCLTUNE_REDIS_URL", "http://nope"}});
  ExpectNcclDefaults(tuner_);
  EXPECT_TRUE(Logged(abi::kLogWarn, "CCLTUNE_REDIS_URL")) << PluginLogText();
}

// Every corruption at once, each under an index entry so the plugin reads it; one valid
// allGather record proves the cache was read at all.
std::vector<std::string> CorruptValues(nlohmann::json good) {
  std::vector<std::string> v{"{not json", std::string(3 << 20, '['), "[]", "", "null"};
  auto mutate = [&](const char* key, nlohmann::json value) {
    auto j = good;
    j[key] = std::move(value);
    v.push_back(j.dump());
  };
  mutate("schema", 2);
  mutate("bytes", "lots");
  mutate("bytes", 1e300);
  mutate("bytes", -1);
  mutate("worldSize", -4);
  mutate("winner", 42);
  mutate("choices", "none");
  mutate("op", "allreduce");
  mutate("fingerprint", "someoneelse");
  mutate("dtype", "fp64");
  auto huge = good;
  huge["jobId"] = std::string(1 << 20, 'x');  // valid JSON, over the record size cap
  v.push_back(huge.dump());
  return v;
}

TEST_F(PluginFaultsTest, CorruptRecordsAreSkipped) {
  auto server = RedisServer::Start();
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  auto redis = core::RedisClient::Connect((*server)->endpoint());
  ASSERT_TRUE(redis.ok());
  const std::string fp = ExpectedFingerprint(4);
  core::ResultStore store(**redis);
  ASSERT_TRUE(store
                  .Publish(fp, ExpectedFingerprintJson(4),
                           {MakeRecord(fp, core::Op::kAllGather, core::Dtype::kFp32, 1 << 20,
                                       "nccl:algo=ring,proto=ll")})
                  .ok());
  const std::string index =
      core::IndexKey(fp, core::Op::kAllReduce, core::Dtype::kBf16, core::RedOp::kSum);
  for (std::uint64_t bytes = 1024; bytes <= (1ull << 30); bytes *= 2) {
    auto good = core::ToJson(
        MakeRecord(fp, core::Op::kAllReduce, core::Dtype::kBf16, bytes, "nccl:algo=ring,proto=ll"));
    const auto values = CorruptValues(good);
    const std::size_t i = static_cast<std::size_t>(__builtin_ctzll(bytes) - 10);
    if (i >= values.size()) break;
    const std::string b = std::to_string(bytes);
    ASSERT_TRUE(
        (*redis)->Command({"SET", core::ResultKey(fp, "allReduce:bf16:sum:" + b), values[i]}).ok());
    ASSERT_TRUE((*redis)->Command({"ZADD", index, b, b}).ok());
  }
  // Index members that are not sizes, and one whose record is missing.
  ASSERT_TRUE((*redis)->Command({"ZADD", index, "1", "-5", "2", "abc", "3", "0", "4", "77"}).ok());
  ScopedEnv env({{"CCLTUNE_REDIS_URL", (*server)->url()}});
  auto init = InitV5(tuner_, 4, 1);
  ASSERT_EQ(init.rc, abi::kSuccess);
  EXPECT_LT(init.took.count(), kInitBudgetMs) << PluginLogText();
  for (std::uint64_t bytes : {1ull, 1024ull, 65536ull, 1ull << 20, 1ull << 30, 1ull << 40}) {
    CostTable table;
    int channels = 0;
    tuner_.v5().getCollInfo(init.ctx, abi::kFuncAllReduce, bytes, 1, table.raw(),
                            abi::kNumAlgorithms, abi::kNumProtocols, 0, &channels);
    EXPECT_TRUE(table.Untouched()) << bytes << "\n" << PluginLogText();
  }
  CostTable gather;
  int channels = 0;
  tuner_.v5().getCollInfo(init.ctx, abi::kFuncAllGather, 1 << 20, 1, gather.raw(),
                          abi::kNumAlgorithms, abi::kNumProtocols, 0, &channels);
  EXPECT_EQ(gather.Forced(), std::make_pair(abi::kAlgoRing, abi::kProtoLL)) << PluginLogText();
  EXPECT_TRUE(Logged(abi::kLogWarn, "unusable records")) << PluginLogText();
  tuner_.v5().finalize(init.ctx);
}

TEST_F(PluginFaultsTest, CorruptResultsFiles) {
  TempDir dir("ccltune-plugin");
  const std::vector<std::string> files{"",
                                       "{}",
                                       "[1,2,3]",
                                       "[{\"schema\":1}]",
                                       "null",
                                       std::string(100000, '[') + std::string(100000, ']'),
                                       "[" + std::string(1 << 20, ' ') + "{\"schema\":\"1\"}]"};
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::ofstream(dir.File("f.json"), std::ios::trunc) << files[i];
    ScopedEnv env({{"CCLTUNE_RESULTS_FILE", dir.File("f.json")}});
    SCOPED_TRACE("file " + std::to_string(i));
    ExpectNcclDefaults(tuner_);
  }
  {
    ScopedEnv env({{"CCLTUNE_RESULTS_FILE", dir.File("missing.json")}});
    ExpectNcclDefaults(tuner_);
    EXPECT_TRUE(Logged(abi::kLogWarn, "cannot be opened")) << PluginLogText();
  }
  // A directory, and a FIFO with no writer (opening it would block): refused at once.
  ScopedEnv as_dir({{"CCLTUNE_RESULTS_FILE", dir.File("")}});
  ExpectNcclDefaults(tuner_);
  EXPECT_TRUE(Logged(abi::kLogWarn, "is not a regular file (a directory)")) << PluginLogText();
  ASSERT_EQ(0, mkfifo(dir.File("fifo.json").c_str(), 0600));
  ScopedEnv as_fifo({{"CCLTUNE_RESULTS_FILE", dir.File("fifo.json")}});
  ExpectNcclDefaults(tuner_);
  EXPECT_TRUE(Logged(abi::kLogWarn, "fifo.json is not a regular file")) << PluginLogText();
}

TEST_F(PluginFaultsTest, NullLoggerAndNullTableDoNotCrash) {
  ScopedEnv env({});
  void* ctx = nullptr;
  ASSERT_EQ(tuner_.v5().init(&ctx, 1, 4, 1, nullptr, nullptr, nullptr), abi::kSuccess);
  int channels = 0;
  EXPECT_EQ(tuner_.v5().getCollInfo(ctx, abi::kFuncAllReduce, 1024, 1, nullptr, 7, 3, 0, &channels),
            abi::kSuccess);
  EXPECT_EQ(tuner_.v5().getCollInfo(nullptr, 99, 1024, 1, nullptr, 7, 3, 0, nullptr),
            abi::kSuccess);
  EXPECT_EQ(tuner_.v5().finalize(ctx), abi::kSuccess);
}

}  // namespace
}  // namespace ccltune::testing

// `ccltune export` and `ccltune report` as processes against a real redis-server: one
// fingerprint or a clear exit 2 listing them, JSON the plugin can read, CSV rows, bad flags.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/result_store.h"
#include "plugin/record_parser.h"
#include "tests/integration/ccltune_process.h"
#include "tests/support/redis_server.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/export/records_fixture.h"

namespace ccltune::testing {
namespace {

class ExportCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = RedisServer::Start();
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    auto redis = core::RedisClient::Connect(server_->endpoint());
    ASSERT_TRUE(redis.ok());
    redis_ = std::move(redis).value();
  }
  void Publish(const std::string& fp) {
    core::ResultStore store(*redis_);
    ASSERT_TRUE(store.Publish(fp, "{\"backend\":\"nccl\",\"nodes\":1}", FixtureSet(fp)).ok());
  }
  RunResult Export(std::vector<std::string> args) {
    args.insert(args.begin(), {"export", "--redis", server_->url()});
    return RunCcltune(args, {}, 60);
  }
  std::unique_ptr<RedisServer> server_;
  std::unique_ptr<core::RedisClient> redis_;
  TempDir dir_{"ccltune-export"};
};

TEST_F(ExportCliTest, JsonIsTheRecordArrayThePluginReads) {
  Publish("aaaa000000000001");
  auto r = Export({"--format", "json", "--output", dir_.File("w.json")});
  ASSERT_EQ(r.code, 0) << r.output;
  auto parsed = plugin::ParseResultsFile(ReadFile(dir_.File("w.json")));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->rejected, 0u) << parsed->first_error;
  EXPECT_EQ(parsed->records.size(), FixtureSet("x").size());
  for (const auto& rec : parsed->records) EXPECT_EQ(rec.fingerprint, "aaaa000000000001");
}

TEST_F(ExportCliTest, CsvHasTheExamplePluginColumns) {
  Publish("aaaa000000000001");
  auto r = Export({"--format", "nccl-tuner-csv"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,"
                          "nNodes,nRanks,numPipeOps,regBuff"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("\nallreduce,0,8191,tree,ll,-1,1,4,-1,-1\n"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("\nallreduce,8192,262143,ring,ll128,8,1,4,-1,-1\n"), std::string::npos);
  EXPECT_EQ(r.output.find("oneshot:blocks=8,threads=512\nallreduce"), std::string::npos);
}

TEST_F(ExportCliTest, SeveralFingerprintsNeedAChoice) {
  Publish("aaaa000000000001");
  Publish("bbbb000000000002");
  auto r = Export({"--format", "json"});
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--fingerprint"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("aaaa000000000001, bbbb000000000002"), std::string::npos) << r.output;
  r = Export({"--format", "json", "--fingerprint", "bbbb000000000002"});
  EXPECT_EQ(r.code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_TRUE(j.is_array()) << r.output;
  EXPECT_EQ(j[0]["fingerprint"], "bbbb000000000002");
  r = Export({"--format", "json", "--fingerprint", "cccc"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--fingerprint cccc is not in the cache"), std::string::npos) << r.output;
}

TEST_F(ExportCliTest, BadFlagsAreOneClearLineAndExit2) {
  Publish("aaaa000000000001");
  auto r = Export({"--format", "csv"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--format 'csv' is not one of nccl-tuner-csv, json"), std::string::npos)
      << r.output;
  r = Export({"--format", "nccl-tuner-csv", "--dtype", "float"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--dtype"), std::string::npos) << r.output;
  r = RunCcltune({"export", "--format", "json", "--redis", "http://x"}, {}, 30);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--redis"), std::string::npos) << r.output;
  r = RunCcltune({"export", "--redis", server_->url()}, {}, 30);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--format"), std::string::npos) << r.output;
  r = RunCcltune({"report", "--redis", server_->url()}, {}, 30);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--html"), std::string::npos) << r.output;
  r = Export({"--format", "json", "--output", "/nonexistent-dir/x.json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("/nonexistent-dir/x.json"), std::string::npos) << r.output;
}

TEST_F(ExportCliTest, EmptyCacheSaysSo) {
  auto r = Export({"--format", "json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("no results"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace ccltune::testing

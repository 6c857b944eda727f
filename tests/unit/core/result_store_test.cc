// ResultStore against a real redis-server, and the nearest-bucket rule on its own.
#include "core/results/result_store.h"

#include <gtest/gtest.h>

#include "tests/support/redis_test.h"

namespace ccltune::core {
namespace {

using testing::RedisTest;

TEST(NearestLog2Bucket, PicksTheClosestInLog2Space) {
  const std::vector<std::uint64_t> tuned{1024, 4096, 65536};
  EXPECT_EQ(NearestLog2Bucket(tuned, 1024), 1024u);
  EXPECT_EQ(NearestLog2Bucket(tuned, 1), 1024u);
  EXPECT_EQ(NearestLog2Bucket(tuned, 0), 1024u);
  EXPECT_EQ(NearestLog2Bucket(tuned, 3000), 4096u);    // log2: 0.45 away vs 1.55
  EXPECT_EQ(NearestLog2Bucket(tuned, 2000), 1024u);    // 0.97 vs 1.03
  EXPECT_EQ(NearestLog2Bucket(tuned, 2048), 4096u);    // exact tie → larger bucket
  EXPECT_EQ(NearestLog2Bucket(tuned, 16384), 65536u);  // tie between 4096 and 65536
  EXPECT_EQ(NearestLog2Bucket(tuned, 1ull << 40), 65536u);
  EXPECT_EQ(NearestLog2Bucket({3000, 12000}, 6000), 12000u);  // 6000² = 3000·12000: tie
  EXPECT_EQ(NearestLog2Bucket({}, 4096), 0u);
}

ResultRecord Rec(const std::string& fp, Op op, std::uint64_t bytes, const std::string& winner) {
  ResultRecord r;
  r.fingerprint = fp;
  r.op = op;
  r.dtype = Dtype::kFp32;
  r.redop = IsReducing(op) ? RedOp::kSum : RedOp::kNone;
  r.bytes = bytes;
  r.winner = winner;
  r.time_us = 10;
  r.default_time_us = 12;
  r.speedup_vs_default = 1.2;
  ChoiceResult c;
  c.name = winner;
  c.time_us = 10;
  c.min_us = 9;
  c.max_us = 11;
  r.choices = {c};
  r.world_size = 4;
  r.tuned_at = "2026-11-22T08:00:00Z";
  r.job_id = "job";
  r.attempt = 1;
  r.tool_version = "0.1.0";
  return r;
}

class ResultStoreTest : public RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    if (HasFatalFailure()) return;
    store_ = std::make_unique<ResultStore>(*client_);
  }
  std::vector<ResultRecord> Records(const std::string& fp) {
    return {Rec(fp, Op::kAllReduce, 1024, "ring"), Rec(fp, Op::kAllReduce, 1 << 20, "rs+ag"),
            Rec(fp, Op::kAllReduce, 4096, "direct"), Rec(fp, Op::kAllGather, 1024, "direct")};
  }
  std::unique_ptr<ResultStore> store_;
};

TEST_F(ResultStoreTest, PublishListAndLookupNearest) {
  const std::string fp = "00aa11bb22cc33dd";
  ASSERT_TRUE(store_->Publish(fp, R"({"backend":"host"})", Records(fp)).ok());
  auto list = store_->List(fp);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 4u);
  EXPECT_EQ((*list)[0].Key(), "allGather:fp32:none:1024");
  EXPECT_EQ((*list)[1].Key(), "allReduce:fp32:sum:1024");
  EXPECT_EQ((*list)[2].Key(), "allReduce:fp32:sum:4096");  // numeric order
  EXPECT_EQ((*list)[3].Key(), "allReduce:fp32:sum:1048576");
  auto hit = store_->Lookup(fp, Op::kAllReduce, Dtype::kFp32, RedOp::kSum, 5000);
  ASSERT_TRUE(hit.ok()) << hit.status().ToString();
  EXPECT_EQ(hit->bytes, 4096u);
  EXPECT_EQ(hit->winner, "direct");
  EXPECT_EQ(store_->Lookup(fp, Op::kAllReduce, Dtype::kFp32, RedOp::kSum, 300000)->bytes, 1u << 20);
  auto miss = store_->Lookup(fp, Op::kAllReduce, Dtype::kBf16, RedOp::kSum, 4096);
  EXPECT_EQ(miss.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*store_->Fingerprints(), std::vector<std::string>{fp});
  EXPECT_EQ(*store_->FingerprintJson(fp), R"({"backend":"host"})");
  EXPECT_EQ(store_->FingerprintJson("ffff").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(client_->Command({"GET", ResultKey(fp, "allReduce:fp32:sum:4096")})->str,
            ToJson(Records(fp)[2]).dump());
  EXPECT_EQ(IndexKey(fp, Op::kAllGather, Dtype::kFp32, RedOp::kNone),
            "ccltune:v1:index:00aa11bb22cc33dd:allGather:fp32:none");
}

TEST_F(ResultStoreTest, EpilogueRecordsKeepTheirOwnKeysAndIndex) {
  const std::string fp = "00aa11bb22cc33dd";
  ResultRecord fused = Rec(fp, Op::kAllReduce, 4096, "oneshot-fused:blocks=16,mode=ll,threads=512");
  fused.epilogue = Epilogue{EpilogueKind::kResidualRmsNorm, 256, 1e-5};
  fused.dtype = Dtype::kBf16;  // 8 rows of 256 bf16
  ResultRecord plain = Rec(fp, Op::kAllReduce, 4096, "nccl");
  plain.dtype = Dtype::kBf16;
  ASSERT_TRUE(store_->Publish(fp, "{}", {plain, fused}).ok());
  const std::string key = "allReduce:bf16:sum:4096:epilogue=residualRmsNorm,hidden=256";
  EXPECT_EQ(client_->Command({"GET", ResultKey(fp, key)})->str, ToJson(fused).dump());
  EXPECT_EQ(IndexKey(fp, Op::kAllReduce, Dtype::kBf16, RedOp::kSum, fused.epilogue),
            "ccltune:v1:index:00aa11bb22cc33dd:allReduce:bf16:sum:epilogue=residualRmsNorm,"
            "hidden=256");
  // A plain lookup never lands on the fused record, and the other way round.
  EXPECT_EQ(store_->Lookup(fp, Op::kAllReduce, Dtype::kBf16, RedOp::kSum, 4096)->winner, "nccl");
  auto hit = store_->Lookup(fp, Op::kAllReduce, Dtype::kBf16, RedOp::kSum, 5000, fused.epilogue);
  ASSERT_TRUE(hit.ok()) << hit.status().ToString();
  EXPECT_EQ(hit->winner, fused.winner);
  EXPECT_EQ(hit->epilogue.hidden, 256);
  Epilogue other{EpilogueKind::kResidualRmsNorm, 512, 1e-5};
  EXPECT_EQ(
      store_->Lookup(fp, Op::kAllReduce, Dtype::kBf16, RedOp::kSum, 4096, other).status().code(),
      StatusCode::kNotFound);
  auto list = store_->List(fp);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[1].Key(), key);
}

TEST_F(ResultStoreTest, RepublishIsIdempotent) {
  const std::string fp = "00aa11bb22cc33dd";
  ASSERT_TRUE(store_->Publish(fp, "{}", Records(fp)).ok());
  const long long keys = client_->Command({"DBSIZE"})->integer;
  ASSERT_TRUE(store_->Publish(fp, "{}", Records(fp)).ok());
  EXPECT_EQ(client_->Command({"DBSIZE"})->integer, keys);
  const auto index = IndexKey(fp, Op::kAllReduce, Dtype::kFp32, RedOp::kSum);
  EXPECT_EQ(client_->Command({"ZCARD", index})->integer, 3);
  EXPECT_EQ(store_->List(fp)->size(), 4u);
}

// A cancelled job publishes nothing: the guard is read under WATCH, so a guard set before
// the publish, or between its read and EXEC, leaves the cache as it was (issue 44).
TEST_F(ResultStoreTest, GuardedPublishAppliesNothingOnceAGuardIsSet) {
  const std::string fp = "00aa11bb22cc33dd";
  const std::vector<std::string> guards{"ccltune:v1:cancelled:j", "ccltune:v1:job:j:0:failure"};
  ASSERT_TRUE(store_->Publish(fp, "{}", Records(fp), guards).ok());
  EXPECT_EQ(store_->List(fp)->size(), 4u);
  ASSERT_TRUE(client_->Command({"FLUSHDB"}).ok());
  ASSERT_TRUE(client_->Command({"SET", guards[0], "ccltune tune got SIGTERM"}).ok());
  const Status st = store_->Publish(fp, "{}", Records(fp), guards);
  EXPECT_EQ(st.code(), StatusCode::kAborted) << st.ToString();
  EXPECT_NE(st.message().find(guards[0] + " is set (ccltune tune got SIGTERM)"), std::string::npos)
      << st.message();
  EXPECT_EQ(client_->Command({"DBSIZE"})->integer, 1);  // the guard alone
  // The client is usable afterwards (no WATCH left behind to abort its next transaction).
  ASSERT_TRUE(client_->Command({"DEL", guards[0]}).ok());
  EXPECT_TRUE(store_->Publish(fp, "{}", Records(fp), guards).ok());
}

TEST_F(ResultStoreTest, TwoFingerprintsDoNotMix) {
  const std::string a = "aaaaaaaaaaaaaaaa", b = "bbbbbbbbbbbbbbbb";
  ASSERT_TRUE(store_->Publish(a, "{}", Records(a)).ok());
  ASSERT_TRUE(store_->Publish(b, "{}", {Rec(b, Op::kAllReduce, 4096, "recursive-doubling")}).ok());
  EXPECT_EQ(store_->List(a)->size(), 4u);
  EXPECT_EQ(store_->List(b)->size(), 1u);
  EXPECT_EQ(store_->Lookup(a, Op::kAllReduce, Dtype::kFp32, RedOp::kSum, 4096)->winner, "direct");
  EXPECT_EQ(store_->Lookup(b, Op::kAllReduce, Dtype::kFp32, RedOp::kSum, 1 << 20)->winner,
            "recursive-doubling");
  EXPECT_EQ(*store_->Fingerprints(), (std::vector<std::string>{a, b}));
}

TEST_F(ResultStoreTest, CorruptRecordIsDataLossNamingTheKey) {
  const std::string fp = "00aa11bb22cc33dd";
  ASSERT_TRUE(store_->Publish(fp, "{}", Records(fp)).ok());
  const std::string key = ResultKey(fp, "allReduce:fp32:sum:4096");
  ASSERT_TRUE(client_->Command({"SET", key, "{\"schema\": 1, \"winner\": 3"}).ok());
  auto hit = store_->Lookup(fp, Op::kAllReduce, Dtype::kFp32, RedOp::kSum, 4096);
  ASSERT_FALSE(hit.ok());
  EXPECT_EQ(hit.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(hit.status().message().find(key), std::string::npos) << hit.status().message();
  EXPECT_EQ(store_->List(fp).status().code(), StatusCode::kDataLoss);
  ASSERT_TRUE(client_->Command({"DEL", key}).ok());  // index points at nothing now
  EXPECT_EQ(store_->Lookup(fp, Op::kAllReduce, Dtype::kFp32, RedOp::kSum, 4096).status().code(),
            StatusCode::kDataLoss);
}

TEST_F(ResultStoreTest, RejectsMismatchedOrUnsafeFingerprints) {
  const std::string fp = "00aa11bb22cc33dd";
  auto s = store_->Publish(fp, "{}", {Rec("other", Op::kAllReduce, 1024, "ring")});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(client_->Command({"DBSIZE"})->integer, 0);  // nothing partial
  EXPECT_EQ(store_->Publish("a*b", "{}", {}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->List("").status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ResultStoreTest, PublishFailsCleanlyWhenRedisIsGone) {
  const std::string fp = "00aa11bb22cc33dd";
  RedisOptions o;
  o.reconnect_deadline = std::chrono::milliseconds(200);
  auto c = RedisClient::Connect(redis_->endpoint(), o);
  ASSERT_TRUE(c.ok());
  ResultStore store(**c);
  ASSERT_TRUE(redis_->Stop().ok());
  auto s = store.Publish(fp, "{}", Records(fp));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("publish " + fp), std::string::npos) << s.message();
}

}  // namespace
}  // namespace ccltune::core

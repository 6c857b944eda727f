#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/results/result.h"

namespace ccltune::core {
namespace {

ResultRecord Sample() {
  ResultRecord r;
  r.fingerprint = "0123456789abcdef";
  r.op = Op::kAllGather;
  r.dtype = Dtype::kBf16;
  r.redop = RedOp::kNone;
  r.bytes = 1 << 20;
  ChoiceResult a;
  a.name = "nccl:algo=ring,proto=ll";
  a.params = {{"algo", "ring"}, {"proto", "ll"}};
  a.time_us = 12.5;
  a.min_us = 12;
  a.max_us = 13.25;
  a.busbw_gbs = 62.9;
  ChoiceResult b;
  b.name = "nccl-symm";
  b.status = ChoiceStatus::kTimeout;
  b.reason = "no progress within 30 s";
  r.choices = {a, b};
  r.winner = a.name;
  r.winner_params = a.params;
  r.time_us = 12.5;
  r.default_time_us = 20;
  r.speedup_vs_default = 1.6;
  r.busbw_gbs = 62.9;
  r.world_size = 4;
  r.tuned_at = "2026-11-22T08:00:00Z";
  r.job_id = "job-1";
  r.attempt = 2;
  r.tool_version = "0.1.0";
  return r;
}

TEST(ResultJson, KeysAreTheContract) {
  const auto j = ToJson(Sample());
  for (const char* k :
       {"schema", "fingerprint", "op", "dtype", "redop", "bytes", "winner", "winnerParams",
        "timeUs", "defaultTimeUs", "speedupVsDefault", "busbwGBs", "choices", "worldSize",
        "tunedAt", "jobId", "attempt", "toolVersion", "search"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
  EXPECT_EQ(j.size(), 19u);
  EXPECT_EQ(j["search"], "exhaustive");
  EXPECT_EQ(j["schema"], 1);
  EXPECT_EQ(j["op"], "allGather");
  EXPECT_EQ(j["redop"], "none");
  const auto& c0 = j["choices"][0];
  for (const char* k : {"name", "params", "timeUs", "minUs", "maxUs", "status", "busbwGBs"}) {
    EXPECT_TRUE(c0.contains(k)) << k;
  }
  EXPECT_FALSE(c0.contains("reason"));
  EXPECT_EQ(j["choices"][1]["status"], "timeout");
  EXPECT_TRUE(j["choices"][1]["timeUs"].is_null());  // infinity has no JSON form
  EXPECT_EQ(j["choices"][1]["reason"], "no progress within 30 s");
}

TEST(ResultJson, RoundTripsIncludingInfinity) {
  const ResultRecord in = Sample();
  auto out = ResultFromJsonText(ToJson(in).dump());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToJson(*out), ToJson(in));
  EXPECT_EQ(out->Key(), "allGather:bf16:none:1048576");
  EXPECT_TRUE(std::isinf(out->choices[1].time_us));
  EXPECT_EQ(out->choices[1].status, ChoiceStatus::kTimeout);
  EXPECT_EQ(out->winner_params["proto"], "ll");
  EXPECT_EQ(out->attempt, 2);
}

// Issue 25: `search` is optional within schema 1 (absent: the record was measured
// exhaustively, as every record before it), and a pruned choice keeps no time.
TEST(ResultJson, SearchAndPrunedChoicesRoundTripAndOldRecordsStillRead) {
  ResultRecord in = Sample();
  in.search = Search::kAdaptive;
  in.choices[1].status = ChoiceStatus::kPruned;
  in.choices[1].reason = "screening: fastest of 2 rounds 30.00 us > 1.03 x 13.25 us, ...";
  const auto j = ToJson(in);
  EXPECT_EQ(j["search"], "adaptive");
  EXPECT_EQ(j["choices"][1]["status"], "pruned");
  EXPECT_TRUE(j["choices"][1]["timeUs"].is_null());
  auto out = ResultFromJson(j);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->search, Search::kAdaptive);
  EXPECT_EQ(out->choices[1].status, ChoiceStatus::kPruned);
  EXPECT_EQ(ToJson(*out), j);

  auto old = j;
  old.erase("search");
  auto read = ResultFromJson(old);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->search, Search::kExhaustive);

  auto bad = j;
  bad["search"] = "greedy";
  auto rejected = ResultFromJson(bad);
  ASSERT_FALSE(rejected.ok());
  EXPECT_EQ(rejected.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(rejected.status().message().find("field search"), std::string::npos)
      << rejected.status().message();
  bad["search"] = 1;
  EXPECT_NE(ResultFromJson(bad).status().message().find("search must be a string"),
            std::string::npos);
}

// A choice without a time has no bandwidth: null beside the null time, not a 0 that reads as
// a measured figure; records written before (0 there) read the same.
TEST(ResultJson, ABandwidthIsNullWhereTheTimeIs) {
  ResultRecord in = Sample();
  in.choices[1].status = ChoiceStatus::kPruned;
  const auto j = ToJson(in);
  EXPECT_TRUE(j["choices"][1]["timeUs"].is_null());
  EXPECT_TRUE(j["choices"][1]["busbwGBs"].is_null()) << j["choices"][1].dump();
  EXPECT_FALSE(j["choices"][0]["busbwGBs"].is_null());
  EXPECT_FALSE(j["busbwGBs"].is_null());
  auto read = ResultFromJson(j);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->choices[1].busbw_gbs, 0);
  EXPECT_EQ(ToJson(*read), j);
  auto old = j;
  old["choices"][1]["busbwGBs"] = 0.0;
  read = ResultFromJson(old);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(ToJson(*read), j);
  old["choices"][1]["busbwGBs"] = "fast";
  EXPECT_NE(ResultFromJson(old).status().message().find("busbwGBs must be a number or null"),
            std::string::npos);
}

TEST(ResultJson, RejectsOtherSchemasAndBadFields) {
  auto j = ToJson(Sample());
  j["schema"] = 2;
  auto r = ResultFromJson(j);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("schema 2 is not supported"), std::string::npos);

  j = ToJson(Sample());
  j.erase("winner");
  EXPECT_NE(ResultFromJson(j).status().message().find("winner is missing"), std::string::npos);
  j = ToJson(Sample());
  j["op"] = "allreduce";
  EXPECT_NE(ResultFromJson(j).status().message().find("field op"), std::string::npos);
  j = ToJson(Sample());
  j["choices"][0]["status"] = "great";
  EXPECT_NE(ResultFromJson(j).status().message().find("choices[0].status"), std::string::npos);
  j = ToJson(Sample());
  j["bytes"] = -1;
  EXPECT_NE(ResultFromJson(j).status().message().find("bytes"), std::string::npos);
  j = ToJson(Sample());
  j["worldSize"] = 10000000000LL;  // does not fit an int
  EXPECT_NE(ResultFromJson(j).status().message().find("worldSize"), std::string::npos);
  j = ToJson(Sample());
  j["timeUs"] = "fast";
  EXPECT_NE(ResultFromJson(j).status().message().find("timeUs must be a number or null"),
            std::string::npos);
  EXPECT_EQ(ResultFromJsonText("{not json").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(ResultFromJsonText("[1,2]").status().code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace ccltune::core

namespace ccltune::core {
namespace {

TEST(ResultJson, EpilogueTravelsAndIsAbsentForPlainRecords) {
  EXPECT_FALSE(ToJson(Sample()).contains("epilogue"));  // schema-1 records keep their shape
  ResultRecord in = Sample();
  in.op = Op::kAllReduce;
  in.redop = RedOp::kSum;
  in.epilogue = Epilogue{EpilogueKind::kResidualRmsNorm, 4096, 1e-6};
  const auto j = ToJson(in);
  EXPECT_EQ(j["epilogue"]["kind"], "residualRmsNorm");
  EXPECT_EQ(j["epilogue"]["hidden"], 4096);
  EXPECT_DOUBLE_EQ(j["epilogue"]["eps"].get<double>(), 1e-6);
  auto out = ResultFromJson(j);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(out->epilogue == in.epilogue);
  EXPECT_EQ(out->Key(), "allReduce:bf16:sum:1048576:epilogue=residualRmsNorm,hidden=4096");
  auto bad = j;
  bad["epilogue"]["kind"] = "gelu";
  EXPECT_NE(ResultFromJson(bad).status().message().find("epilogue.kind"), std::string::npos);
  bad = j;
  bad["epilogue"]["hidden"] = 3072;  // 1 MiB is no whole number of 3072-wide bf16 rows
  EXPECT_NE(ResultFromJson(bad).status().message().find("no whole number of rows"),
            std::string::npos);
  bad = j;
  bad["epilogue"] = "residualRmsNorm";
  EXPECT_NE(ResultFromJson(bad).status().message().find("must be an object"), std::string::npos);
}

}  // namespace
}  // namespace ccltune::core

namespace ccltune::core {
namespace {

// Issue 43: `anyBuffer` is optional within schema 1. Written only when the record has one;
// records without it (older ones) read as before, with none.
TEST(ResultJson, AnyBufferRoundTripsAndOldRecordsReadWithout) {
  EXPECT_FALSE(ToJson(Sample()).contains("anyBuffer"));
  ResultRecord in = Sample();
  in.any_buffer = AnyBufferChoice{"oneshot:blocks=8,mode=ll,threads=512", 14.25, 1.4};
  const auto j = ToJson(in);
  EXPECT_EQ(j.size(), 20u);
  EXPECT_EQ(j["anyBuffer"]["choice"], "oneshot:blocks=8,mode=ll,threads=512");
  EXPECT_DOUBLE_EQ(j["anyBuffer"]["timeUs"].get<double>(), 14.25);
  EXPECT_DOUBLE_EQ(j["anyBuffer"]["speedupVsDefault"].get<double>(), 1.4);
  EXPECT_EQ(j["anyBuffer"].size(), 3u);
  auto out = ResultFromJsonText(j.dump());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_TRUE(out->any_buffer.has_value());
  EXPECT_EQ(out->any_buffer->choice, "oneshot:blocks=8,mode=ll,threads=512");
  EXPECT_DOUBLE_EQ(out->any_buffer->time_us, 14.25);
  EXPECT_DOUBLE_EQ(out->any_buffer->speedup_vs_default, 1.4);
  EXPECT_EQ(ToJson(*out), j);

  auto old = j;
  old.erase("anyBuffer");
  auto read = ResultFromJson(old);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_FALSE(read->any_buffer.has_value());
  EXPECT_EQ(ToJson(*read), old);
}

TEST(ResultJson, RejectsAMalformedAnyBuffer) {
  ResultRecord in = Sample();
  in.any_buffer = AnyBufferChoice{"nccl", 20, 1};
  const auto good = ToJson(in);
  const auto message = [](const nlohmann::json& j) {
    auto r = ResultFromJson(j);
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : r.status().message();
  };
  auto bad = good;
  bad["anyBuffer"] = "nccl";
  EXPECT_EQ(message(bad), "result record field anyBuffer must be an object");
  bad = good;
  bad["anyBuffer"].erase("timeUs");
  EXPECT_EQ(message(bad), "result record field anyBuffer.timeUs is missing");
  bad = good;
  bad["anyBuffer"]["choice"] = 3;
  EXPECT_EQ(message(bad), "result record field anyBuffer.choice must be a string");
  bad = good;
  bad["anyBuffer"]["choice"] = "";
  EXPECT_EQ(message(bad), "result record field anyBuffer.choice must not be empty");
  bad = good;
  bad["anyBuffer"]["timeUs"] = 0;
  EXPECT_EQ(message(bad), "result record field anyBuffer.timeUs must be a time > 0");
}

// Issue 43: a choice's `hostUs` (eager tunes, choices a program's own buffers run) is
// optional within schema 1: written only when measured, read back exactly, and checked.
TEST(ResultJson, HostTimeRoundTripsAndIsChecked) {
  ResultRecord in = Sample();
  ASSERT_FALSE(in.choices.empty());
  EXPECT_FALSE(ToJson(in)["choices"][0].contains("hostUs"));
  in.choices[0].host_us = 12.5;
  const auto j = ToJson(in);
  EXPECT_DOUBLE_EQ(j["choices"][0]["hostUs"].get<double>(), 12.5);
  auto out = ResultFromJson(j);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_TRUE(out->choices[0].host_us.has_value());
  EXPECT_DOUBLE_EQ(*out->choices[0].host_us, 12.5);
  EXPECT_EQ(ToJson(*out), j);
  for (const nlohmann::json& bad_value :
       {nlohmann::json(0), nlohmann::json(-1.5), nlohmann::json("12"), nlohmann::json(nullptr)}) {
    auto bad = j;
    bad["choices"][0]["hostUs"] = bad_value;
    auto r = ResultFromJson(bad);
    ASSERT_FALSE(r.ok()) << bad_value.dump();
    EXPECT_EQ(r.status().message().rfind("result record field choices[0].hostUs must be", 0), 0u)
        << r.status().message();
  }
}

}  // namespace
}  // namespace ccltune::core

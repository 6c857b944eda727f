// The applied-choice rule (core/apply/applied_choice.h) on records as the parser keeps them:
// winners a tuner can reproduce are applied as measured, ctas winners above the channel
// ceiling give way to the fastest reproducible measured choice only when it beats `nccl`
// by more than the noise threshold, and the ceiling comes from NCCL_MIN_CTAS.
#include "core/apply/applied_choice.h"

#include <gtest/gtest.h>

#include <limits>

#include "core/apply/plugin_config.h"
#include "core/apply/tuner_abi.h"
#include "core/apply/winner_table.h"
#include "tests/plugin/scoped_env.h"

namespace ccltune::apply {
namespace {

using core::ChoiceStatus;

struct Measured {
  std::string name;
  double time_us;
  ChoiceStatus status = ChoiceStatus::kOk;
};

// A record as published, read the way the plugin reads it.
WinnerRecord Record(const std::string& winner, const std::vector<Measured>& measured) {
  core::ResultRecord r;
  r.fingerprint = "0123456789abcdef";
  r.bytes = 1 << 20;
  r.world_size = 4;
  r.winner = winner;
  for (const auto& m : measured)
    r.choices.push_back({m.name, nlohmann::json::object(), m.time_us, m.time_us, m.time_us, 1.0,
                         m.status, m.status == ChoiceStatus::kOk ? "" : "test"});
  auto w = WinnerRecordFrom(r);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return w.ok() ? *w : WinnerRecord{};
}

// The 4xH200 shape of issue 7: ctas=32 won, ring/ll128 is the best a tuner can do alone.
const std::vector<Measured> kCtas32{{"nccl", 19.70},
                                    {"nccl:algo=ring,proto=ll128", 17.90},
                                    {"nccl:algo=tree,proto=simple", 21.00},
                                    {"nccl:ctas=16", 18.50},
                                    {"nccl:ctas=32", 17.76},
                                    {"nccl-symm", 9.00}};

TEST(ApplyChoice, NonNcclWinnerLeavesNcclAlone) {
  for (const char* winner : {"nccl-symm", "oneshot:blocks=8,threads=512", "nccl-reg", "rs+ag",
                             "nccl:p2pchunk=4", "bogus:x=1"}) {
    const auto a = ApplyChoice(Record(winner, kCtas32), 64);
    EXPECT_FALSE(a.forced.forces_anything()) << winner;
    EXPECT_EQ(a.name, "") << winner;
    EXPECT_FALSE(a.substituted) << winner;
    EXPECT_NE(a.reason.find("NCCL's own choice"), std::string::npos) << a.reason;
  }
}

TEST(ApplyChoice, ReproducibleWinnersApplyAsMeasured) {
  auto a = ApplyChoice(Record("nccl:algo=ring,proto=ll128", kCtas32), 0);
  EXPECT_EQ(a.name, "nccl:algo=ring,proto=ll128");
  EXPECT_EQ(a.forced.algo, abi::kAlgoRing);
  EXPECT_EQ(a.forced.proto, abi::kProtoLL128);
  EXPECT_EQ(a.forced.channels, 0);
  EXPECT_DOUBLE_EQ(a.time_us, 17.90);
  EXPECT_FALSE(a.substituted);
  a = ApplyChoice(Record("nccl", kCtas32), 0);
  EXPECT_EQ(a.name, "nccl");
  EXPECT_FALSE(a.forced.forces_anything());
  EXPECT_DOUBLE_EQ(a.time_us, 19.70);
  // ctas=N within the ceiling: as today, *nChannels = N.
  a = ApplyChoice(Record("nccl:ctas=32", kCtas32), 32);
  EXPECT_EQ(a.name, "nccl:ctas=32");
  EXPECT_EQ(a.forced.channels, 32);
  EXPECT_DOUBLE_EQ(a.time_us, 17.76);
  EXPECT_FALSE(a.substituted);
}

TEST(ApplyChoice, CtasAboveCeilingFallsBackToFastestReproducible) {
  const auto a = ApplyChoice(Record("nccl:ctas=32", kCtas32), 0);
  EXPECT_TRUE(a.substituted);
  EXPECT_EQ(a.name, "nccl:algo=ring,proto=ll128");  // ctas=16 is faster than nccl but > 0
  EXPECT_EQ(a.forced.algo, abi::kAlgoRing);
  EXPECT_EQ(a.forced.proto, abi::kProtoLL128);
  EXPECT_EQ(a.forced.channels, 0);
  EXPECT_DOUBLE_EQ(a.time_us, 17.90);
  EXPECT_EQ(a.reason,
            "winner nccl:ctas=32 needs >= 32 channels (set NCCL_MIN_CTAS=32); applying "
            "nccl:algo=ring,proto=ll128 (17.90 us vs nccl 19.70 us)");
}

TEST(ApplyChoice, CeilingBelowWinnerAdmitsSmallerCtas) {
  auto measured = kCtas32;
  measured[3].time_us = 17.0;  // ctas=16 now the fastest reproducible with 16 channels
  const auto a = ApplyChoice(Record("nccl:ctas=32", measured), 16);
  EXPECT_EQ(a.name, "nccl:ctas=16");
  EXPECT_EQ(a.forced.channels, 16);
  EXPECT_EQ(a.forced.algo, -1);
  EXPECT_NE(a.reason.find("NCCL_MIN_CTAS=16 guarantees only 16; set NCCL_MIN_CTAS=32"),
            std::string::npos)
      << a.reason;
  // Winner with algo, proto and ctas: the same rule.
  const auto b = ApplyChoice(Record("nccl:algo=ring,ctas=32,proto=ll128", measured), 8);
  EXPECT_EQ(b.name, "nccl:algo=ring,proto=ll128");
}

TEST(ApplyChoice, NotBeatingNcclByMoreThanThresholdAppliesNccl) {
  // 3 % faster exactly is not *more* than 3 %: nccl, as core::PickWinner would decide.
  const double exactly = 20.0 * (1.0 - kNoiseThresholdPercent / 100.0);
  const auto a = ApplyChoice(
      Record("nccl:ctas=32",
             {{"nccl", 20.0}, {"nccl:algo=ring,proto=ll", exactly}, {"nccl:ctas=32", 15.0}}),
      0);
  EXPECT_TRUE(a.substituted);
  EXPECT_EQ(a.name, "nccl");
  EXPECT_FALSE(a.forced.forces_anything());
  EXPECT_DOUBLE_EQ(a.time_us, 20.0);
  EXPECT_NE(a.reason.find("applying nccl (20.00 us; nccl:algo=ring,proto=ll 19.40 us is not "
                          "faster by more than 3%)"),
            std::string::npos)
      << a.reason;
  // Just past the threshold: forced.
  const auto b = ApplyChoice(
      Record("nccl:ctas=32",
             {{"nccl", 20.0}, {"nccl:algo=ring,proto=ll", exactly - 0.01}, {"nccl:ctas=32", 15.0}}),
      0);
  EXPECT_EQ(b.name, "nccl:algo=ring,proto=ll");
}

TEST(ApplyChoice, TiesGoToTheEarlierChoiceInTheRecord) {
  const auto a = ApplyChoice(Record("nccl:ctas=32", {{"nccl", 20.0},
                                                     {"nccl:algo=tree,proto=ll", 15.0},
                                                     {"nccl:algo=ring,proto=ll", 15.0},
                                                     {"nccl:ctas=32", 14.0}}),
                             0);
  EXPECT_EQ(a.name, "nccl:algo=tree,proto=ll");
}

TEST(ApplyChoice, UnusableMeasurementsAreIgnored) {
  const double inf = std::numeric_limits<double>::infinity();
  const auto a = ApplyChoice(
      Record("nccl:ctas=32", {{"nccl", 20.0},
                              {"nccl:algo=tree,proto=ll", 5.0, ChoiceStatus::kWrong},
                              {"nccl:algo=tree,proto=ll128", inf, ChoiceStatus::kTimeout},
                              {"nccl:algo=tree,proto=simple", 5.0, ChoiceStatus::kFailed},
                              {"nccl:algo=ring,proto=ll", 5.0, ChoiceStatus::kSkipped},
                              {"nccl:algo=ring,proto=ll128", -1.0},
                              {"nccl:algo=ring,proto=simple", 0.0},
                              {"nccl:ctas=32", 15.0}}),
      0);
  EXPECT_EQ(a.name, "nccl");
  EXPECT_NE(a.reason.find("no other reproducible choice was measured"), std::string::npos)
      << a.reason;
}

TEST(ApplyChoice, NoNcclMeasurementForcesNothing) {
  const auto a = ApplyChoice(
      Record("nccl:ctas=32", {{"nccl:algo=ring,proto=ll128", 10.0}, {"nccl:ctas=32", 9.0}}), 0);
  EXPECT_TRUE(a.substituted);
  EXPECT_EQ(a.name, "");
  EXPECT_FALSE(a.forced.forces_anything());
  EXPECT_NE(a.reason.find("no usable nccl time"), std::string::npos) << a.reason;
  // nccl measured but not ok counts as absent too.
  const auto b = ApplyChoice(Record("nccl:ctas=32", {{"nccl", 10.0, ChoiceStatus::kTimeout},
                                                     {"nccl:algo=ring,proto=ll128", 5.0}}),
                             0);
  EXPECT_EQ(b.name, "");
}

TEST(RecordParser, KeepsOnlyApplicableChoicesUpToTheCap) {
  std::vector<Measured> many{{"nccl", 20.0},
                             {"oneshot:blocks=8,threads=512", 3.0},
                             {"nccl:p2pchunk=4", 3.0},
                             {"nccl:bogus", 3.0}};
  for (std::size_t i = 0; i < kMaxKeptChoices + 10; ++i)
    many.push_back({"nccl:ctas=" + std::to_string(1 + i % 64), 30.0 + static_cast<double>(i)});
  const WinnerRecord r = Record("nccl:ctas=32", many);
  ASSERT_EQ(r.choices.size(), kMaxKeptChoices);
  EXPECT_EQ(r.choices[0].name, "nccl");
  EXPECT_EQ(r.choices[1].name, "nccl:ctas=1");  // the other three are not NCCL's tuner's
}

TEST(RecordParser, MalformedChoicesRejectTheRecordWithoutCrashing) {
  const std::string head =
      R"({"schema":1,"fingerprint":"f","op":"allReduce","dtype":"bf16","redop":"sum",)"
      R"("bytes":1024,"winner":"nccl:ctas=32","winnerParams":{},"timeUs":1,"defaultTimeUs":2,)"
      R"("speedupVsDefault":2,"busbwGBs":1,"worldSize":4,"tunedAt":"t","jobId":"j",)"
      R"("attempt":0,"toolVersion":"v","choices":)";
  for (const char* choices : {R"([5])", R"([{"name":7}])", R"([null])", R"({"a":1})",
                              R"([{"name":"nccl","params":{},"timeUs":"x","minUs":1,)"
                              R"("maxUs":1,"status":"ok","busbwGBs":1}])"}) {
    auto r = ParseWinnerRecord(head + choices + "}");
    EXPECT_FALSE(r.ok()) << choices;
    EXPECT_NE(r.status().message().find("choices"), std::string::npos) << r.status().message();
  }
}

TEST(WinnerTable, RecordsWithAnEpilogueNeverReachNccl) {
  WinnerRecord plain = Record("nccl:algo=ring,proto=ll128", kCtas32);
  plain.dtype = core::Dtype::kBf16;
  plain.bytes = 4096;
  // Measured with a residual add + RMSNorm after it: its winner says nothing about the
  // bare all-reduce, even at a size nearer to the call than the plain record's.
  WinnerRecord fused = Record("nccl:algo=tree,proto=simple", kCtas32);
  fused.dtype = core::Dtype::kBf16;
  fused.bytes = 1 << 20;
  fused.epilogue = {core::EpilogueKind::kResidualRmsNorm, 4096, 1e-5};
  const WinnerTable t = WinnerTable::Build({fused, plain}, std::nullopt, 0);
  const int f = NcclFuncOf(core::Op::kAllReduce);
  ASSERT_EQ(t.Entries(f).size(), 1u);
  const TableEntry* e = t.Lookup(f, 1 << 20);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->record.bytes, 4096u);
  EXPECT_TRUE(e->record.epilogue.none());
  EXPECT_EQ(WinnerTable::Build({fused}, std::nullopt, 0).size(), 0u);
}

TEST(ChannelCeiling, ParsesZeroOrPositiveIntegers) {
  EXPECT_EQ(*ParseChannelCeiling("0"), 0);
  EXPECT_EQ(*ParseChannelCeiling("32"), 32);
  for (const char* bad : {"", "-1", "32x", " 32", "3.5", "abc", "99999999999999999999"}) {
    auto n = ParseChannelCeiling(bad);
    EXPECT_FALSE(n.ok()) << bad;
    EXPECT_NE(n.status().message().find("positive integer"), std::string::npos);
  }
}

TEST(ChannelCeiling, FromNcclMinCtas) {
  {
    testing::ScopedEnv env({});
    EXPECT_EQ(*ChannelCeilingFromEnv(), 0);
  }
  {
    testing::ScopedEnv env({{"NCCL_MIN_CTAS", "32"}});
    EXPECT_EQ(*ChannelCeilingFromEnv(), 32);
  }
  {
    testing::ScopedEnv env({{"NCCL_MIN_CTAS", "lots"}});
    auto n = ChannelCeilingFromEnv();
    ASSERT_FALSE(n.ok());
    EXPECT_NE(n.status().message().find("NCCL_MIN_CTAS"), std::string::npos);
    EXPECT_NE(n.status().message().find("'lots'"), std::string::npos);
  }
}

}  // namespace
}  // namespace ccltune::apply

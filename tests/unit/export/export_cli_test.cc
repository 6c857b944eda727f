// `ccltune export`, `ccltune report` and `ccltune results` as processes against a real
// redis-server: one fingerprint or a clear exit 2 listing them, JSON the plugin can read, CSV
// rows, host-backend runs refused by the plugin's formats, bad flags.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/apply/record_parser.h"
#include "core/results/result_store.h"
#include "tests/integration/ccltune_process.h"
#include "tests/support/redis_test.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/export/records_fixture.h"

namespace ccltune::testing {
namespace {

class ExportCliTest : public RedisTest {
 protected:
  void Publish(const std::string& fp) { Publish(fp, FixtureSet(fp)); }
  void Publish(const std::string& fp, const std::vector<core::ResultRecord>& records) {
    core::ResultStore store(*client_);
    ASSERT_TRUE(store.Publish(fp, "{\"backend\":\"nccl\",\"nodes\":1}", records).ok());
  }
  RunResult Export(std::vector<std::string> args) {
    args.insert(args.begin(), {"export", "--redis", redis_->url()});
    return RunCcltune(args, {}, 60);
  }
  TempDir dir_{"ccltune-export"};
};

TEST_F(ExportCliTest, JsonIsTheRecordArrayThePluginReads) {
  Publish("aaaa000000000001");
  auto r = Export({"--format", "json", "--output", dir_.File("w.json")});
  ASSERT_EQ(r.code, 0) << r.output;
  auto parsed = apply::ParseResultsFile(ReadFile(dir_.File("w.json")));
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
  EXPECT_EQ(r.output.find("oneshot:blocks=8,threads=512\nallreduce"), std::string::npos);
  // The 64 KiB winner names ctas=8: without --min-ctas the plugin cannot reproduce it and
  // NCCL decides (the fixture's other choices are slower than nccl), so no row; with
  // --min-ctas 8, as the plugin under NCCL_MIN_CTAS=8, the winner's row with 8 channels.
  const std::string ctas_row = "\nallreduce,8192,262143,ring,ll128,8,1,4,-1,-1\n";
  EXPECT_EQ(r.output.find(ctas_row), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("\nallreduce,8192,"), std::string::npos) << r.output;
  r = Export({"--format", "nccl-tuner-csv", "--min-ctas", "8"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find(ctas_row), std::string::npos) << r.output;
}

// The issue-7 shape: a ctas=32 winner, ring/ll128 the best a tuner alone can reproduce.
std::vector<core::ResultRecord> Ctas32Set(const std::string& fp) {
  auto records = FixtureSet(fp);
  auto& r = records[1];  // allReduce bf16 64 KiB
  r.winner = "nccl:ctas=32";
  r.choices[1].name = "nccl:algo=ring,proto=ll128";
  r.choices[1].time_us = r.choices[0].time_us * 0.9;
  r.choices[3].name = "nccl:ctas=32";
  return records;
}

const nlohmann::json* SizeEntry(const nlohmann::json& applied, std::uint64_t bytes) {
  for (const auto& e : applied["sizes"])
    if (e["op"] == "allReduce" && e["bytes"] == bytes) return &e;
  return nullptr;
}

TEST_F(ExportCliTest, AppliedJsonAndCsvFollowThePluginsRule) {
  const auto records = Ctas32Set("aaaa000000000001");
  Publish("aaaa000000000001", records);
  auto r = Export({"--format", "applied-json"});
  ASSERT_EQ(r.code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.output;
  EXPECT_EQ(j["minCtas"], 0);
  const auto* e = SizeEntry(j, 65536);
  ASSERT_NE(e, nullptr) << r.output;
  EXPECT_EQ((*e)["winner"], "nccl:ctas=32");
  EXPECT_EQ((*e)["applied"], "nccl:algo=ring,proto=ll128");
  EXPECT_EQ((*e)["substituted"], true);
  EXPECT_DOUBLE_EQ((*e)["appliedTimeUs"].get<double>(), records[1].choices[1].time_us);
  EXPECT_EQ((*e)["algo"], "ring");
  EXPECT_EQ((*e)["channels"], 0);
  EXPECT_NE((*e)["reason"].get<std::string>().find("set NCCL_MIN_CTAS=32"), std::string::npos);
  e = SizeEntry(j, 1 << 20);  // oneshot: NCCL left alone, nothing measured to compare with
  ASSERT_NE(e, nullptr);
  EXPECT_EQ((*e)["applied"], "");
  EXPECT_TRUE((*e)["appliedTimeUs"].is_null());
  // The CSV says the same: the substitute's algo/proto for 64 KiB, no channels.
  r = Export({"--format", "nccl-tuner-csv"});
  EXPECT_NE(r.output.find("\nallreduce,8192,262143,ring,ll128,-1,1,4,-1,-1\n"), std::string::npos)
      << r.output;
  // With NCCL_MIN_CTAS=32 the winner itself: 32 channels, NCCL picks algo and proto.
  r = Export({"--format", "applied-json", "--min-ctas", "32"});
  j = nlohmann::json::parse(r.output, nullptr, false);
  e = SizeEntry(j, 65536);
  ASSERT_NE(e, nullptr) << r.output;
  EXPECT_EQ((*e)["applied"], "nccl:ctas=32");
  EXPECT_EQ((*e)["substituted"], false);
  EXPECT_EQ((*e)["channels"], 32);
  EXPECT_TRUE((*e)["algo"].is_null());
}

TEST_F(ExportCliTest, ResultsFileGivesWhatTheCacheGives) {
  Publish("aaaa000000000001", Ctas32Set("aaaa000000000001"));
  auto r = Export({"--format", "json", "--output", dir_.File("w.json")});
  ASSERT_EQ(r.code, 0) << r.output;
  const auto from_cache = Export({"--format", "applied-json"});
  const auto from_file = RunCcltune(
      {"export", "--format", "applied-json", "--results-file", dir_.File("w.json")}, {}, 30);
  ASSERT_EQ(from_file.code, 0) << from_file.output;
  EXPECT_EQ(from_file.output, from_cache.output);
  r = RunCcltune({"export", "--format", "applied-json", "--results-file", dir_.File("w.json"),
                  "--fingerprint", "bbbb"},
                 {}, 30);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--fingerprint bbbb is not in " + dir_.File("w.json")), std::string::npos)
      << r.output;
  std::ofstream(dir_.File("bad.json")) << "[{\"schema\": 1}]";
  r = RunCcltune({"export", "--format", "applied-json", "--results-file", dir_.File("bad.json")},
                 {}, 30);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--results-file " + dir_.File("bad.json") + " [0]"), std::string::npos)
      << r.output;
}

TEST_F(ExportCliTest, MinCtasMustBeAChannelCountForAPluginFormat) {
  Publish("aaaa000000000001");
  for (const char* bad : {"abc", "-1", "3.5"}) {
    auto r = Export({"--format", "nccl-tuner-csv", "--min-ctas", bad});
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_NE(r.output.find("--min-ctas"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("positive integer"), std::string::npos) << r.output;
  }
  auto r = Export({"--format", "json", "--min-ctas", "32"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--min-ctas"), std::string::npos) << r.output;
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

// A lookup answers for one cluster shape: with two in the cache it refuses as export does
// (the same line), rather than answer from whichever fingerprint comes first.
TEST_F(ExportCliTest, ResultsLookupWithSeveralFingerprintsNeedsAChoice) {
  Publish("aaaa000000000001");
  Publish("bbbb000000000002");
  const std::vector<std::string> lookup{"results", "--redis", redis_->url(), "--op", "allReduce",
                                        "--dtype", "bf16",    "--bytes",     "3000"};
  auto r = RunCcltune(lookup, {}, 60);
  EXPECT_EQ(r.code, 2) << r.output;
  const std::string refusal =
      "the cache holds 2 fingerprints; choose one with --fingerprint: aaaa000000000001, "
      "bbbb000000000002";
  EXPECT_NE(r.output.find(refusal), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("\"winner\""), std::string::npos) << "no answer: " << r.output;
  auto e = Export({"--format", "json"});
  EXPECT_NE(e.output.find(refusal), std::string::npos) << e.output;

  auto args = lookup;
  args.insert(args.end(), {"--fingerprint", "bbbb000000000002"});
  r = RunCcltune(args, {}, 60);
  ASSERT_EQ(r.code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.output;
  EXPECT_EQ(j["fingerprint"], "bbbb000000000002");
  EXPECT_EQ(j["bytes"], 1024);  // 3000 B: the nearest tuned size in log2 space
  args.back() = "cccc";
  r = RunCcltune(args, {}, 60);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--fingerprint cccc is not in the cache"), std::string::npos) << r.output;
}

// `ccltune tune --backend host` on 2 ranks, 2 sizes: its fingerprint, whose records hold host
// choices only (ring, direct, ...).
std::string TuneOnHost(const std::string& redis_url, core::ResultStore& store) {
  auto tune =
      RunCcltune(HostTuneArgs(2, redis_url,
                              {"--op", "allReduce", "--dtypes", "fp32", "--sizes", "4KiB,64KiB",
                               "--iters", "2", "--rounds", "1", "--warmup", "1"}),
                 {}, 180);
  EXPECT_EQ(tune.code, 0) << tune.output;
  auto fps = store.Fingerprints();
  EXPECT_TRUE(fps.ok() && fps->size() == 1u) << tune.output;
  return fps.ok() && fps->size() == 1u ? fps->front() : "";
}

// NCCL's tuner cannot apply a host choice: a CSV (or applied-json) of a host run would be its
// headers alone, read as "NCCL decides every size". Refused, naming the backend and the format
// that fits, and nothing written, not even over an older file; json exports the run.
TEST_F(ExportCliTest, HostBackendRunIsRefusedByThePluginFormats) {
  core::ResultStore store(*client_);
  const std::string fp = TuneOnHost(redis_->url(), store);
  ASSERT_FALSE(fp.empty());
  for (const char* format : {"nccl-tuner-csv", "applied-json"}) {
    const std::string fresh = dir_.File(std::string(format) + ".new");
    const std::string older = dir_.File(std::string(format) + ".old");
    std::ofstream(older) << "older export\n";
    for (const std::string& out : {fresh, older}) {
      auto r = Export({"--format", format, "--output", out});
      EXPECT_EQ(r.code, 2) << r.output;
      EXPECT_NE(
          r.output.find("--format " + std::string(format) + ": the 2 records of fingerprint " + fp +
                        " were measured with the host backend: they hold no NCCL "
                        "choice for NCCL's tuner to apply"),
          std::string::npos)
          << r.output;
      EXPECT_NE(r.output.find("(--format json exports them)"), std::string::npos) << r.output;
    }
    EXPECT_FALSE(std::filesystem::exists(fresh)) << "a header-only file was left: " << fresh;
    EXPECT_EQ(ReadFile(older), "older export\n");
  }
  auto r = Export({"--format", "json", "--output", dir_.File("host.json")});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(ReadFile(dir_.File("host.json"))).size(), 2u);
}

// Host records beside NCCL ones under one fingerprint: the NCCL ones are exported exactly as
// alone, and one note counts what was left out and why.
TEST_F(ExportCliTest, HostRecordsAmongNcclOnesAreLeftOutWithACount) {
  core::ResultStore store(*client_);
  const std::string host_fp = TuneOnHost(redis_->url(), store);
  ASSERT_FALSE(host_fp.empty());
  auto host = store.List(host_fp);
  ASSERT_TRUE(host.ok()) << host.status().ToString();
  Publish("aaaa000000000001");
  auto mixed = FixtureSet("cccc000000000003");
  for (auto rec : *host) {
    rec.fingerprint = "cccc000000000003";
    mixed.push_back(rec);
  }
  Publish("cccc000000000003", mixed);
  auto plain = Export({"--format", "nccl-tuner-csv", "--fingerprint", "aaaa000000000001"});
  auto r = Export({"--format", "nccl-tuner-csv", "--fingerprint", "cccc000000000003"});
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string note =
      "ccltune export: left out 2 of " + std::to_string(mixed.size()) +
      " records, measured with the host backend (no NCCL choice for NCCL's tuner; --format "
      "json keeps them)\n";
  const auto at = r.output.find(note);
  ASSERT_NE(at, std::string::npos) << r.output;
  std::string rows = r.output.erase(at, note.size());
  for (std::size_t i; (i = rows.find("cccc000000000003")) != std::string::npos;)
    rows.replace(i, 16, "aaaa000000000001");
  EXPECT_EQ(rows, plain.output);
}

TEST_F(ExportCliTest, BadFlagsAreOneClearLineAndExit2) {
  Publish("aaaa000000000001");
  auto r = Export({"--format", "csv"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--format 'csv' is not one of nccl-tuner-csv, json, applied-json"),
            std::string::npos)
      << r.output;
  r = Export({"--format", "nccl-tuner-csv", "--dtype", "float"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--dtype"), std::string::npos) << r.output;
  r = RunCcltune({"export", "--format", "json", "--redis", "http://x"}, {}, 30);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--redis"), std::string::npos) << r.output;
  r = RunCcltune({"export", "--redis", redis_->url()}, {}, 30);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--format"), std::string::npos) << r.output;
  r = RunCcltune({"report", "--redis", redis_->url()}, {}, 30);
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

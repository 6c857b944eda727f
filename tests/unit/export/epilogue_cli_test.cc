// Issue 16 through the CLI, as processes against a real redis-server: records of fused
// all-reduce + epilogue problems next to plain ones. `results` looks them up and lists them
// under their own header; `export --format json` carries the field while the plugin's
// formats leave them out with one note; `report --html` gives them their own section over
// tokens; `tune --epilogue/--tokens` reject bad values naming the flag.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/results/result_store.h"
#include "tests/integration/ccltune_process.h"
#include "tests/support/redis_test.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/export/records_fixture.h"
#include "worker/report/html_report.h"

namespace ccltune::testing {
namespace {

constexpr char kPlain[] = "eeee000000000001";  // the fixture set alone
constexpr char kFused[] = "eeee000000000002";  // the fixture set and the epilogue records
constexpr int kHidden = 4096;

core::Epilogue RmsNorm() {
  core::Epilogue e;
  e.kind = core::EpilogueKind::kResidualRmsNorm;
  e.hidden = kHidden;
  return e;
}

// allReduce bf16 + residualRmsNorm at 1, 8 and 128 tokens, with winners the plugin could
// force if it took them (so leaving them out is visible), and a fused winner.
std::vector<core::ResultRecord> EpilogueRecords(const std::string& fp) {
  std::vector<core::ResultRecord> out;
  const std::pair<std::uint64_t, const char*> rows[] = {
      {1, "oneshot-fused:blocks=32,mode=pull,threads=512"},
      {8, "nccl:algo=ring,proto=simple"},
      {128, "nccl:algo=tree,proto=ll"}};
  for (const auto& [tokens, winner] : rows) {
    auto r =
        FixtureRecord(fp, core::Op::kAllReduce, core::Dtype::kBf16, tokens * kHidden * 2, winner);
    r.epilogue = RmsNorm();
    out.push_back(r);
  }
  return out;
}

class EpilogueCliTest : public RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    if (HasFatalFailure()) return;
    core::ResultStore store(*client_);
    const std::string fp_json = "{\"backend\":\"nccl\",\"nodes\":1}";
    ASSERT_TRUE(store.Publish(kPlain, fp_json, FixtureSet(kPlain)).ok());
    auto both = FixtureSet(kFused);
    for (auto& r : EpilogueRecords(kFused)) both.push_back(r);
    ASSERT_TRUE(store.Publish(kFused, fp_json, both).ok());
  }
  RunResult Run(const std::string& command, std::vector<std::string> args) {
    args.insert(args.begin(), {command, "--redis", redis_->url()});
    return RunCcltune(args, {}, 60);
  }
  TempDir dir_{"ccltune-epilogue-cli"};
};

std::string WithoutLine(std::string text, const std::string& start) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);)
    if (line.rfind(start, 0) != 0) out += line + "\n";
  return out;
}

TEST_F(EpilogueCliTest, ResultsLooksUpTheFusedProblemOnlyWithEpilogue) {
  const std::vector<std::string> point{"--fingerprint", kFused, "--op",    "allReduce",
                                       "--dtype",       "bf16", "--bytes", "4KiB"};
  auto plain = Run("results", point);
  ASSERT_EQ(plain.code, 0) << plain.output;
  auto p = nlohmann::json::parse(plain.output);
  EXPECT_EQ(p["bytes"], 1024) << p;  // nearest plain bucket; the fused 8 KiB is not one
  EXPECT_FALSE(p.contains("epilogue")) << p;

  auto args = point;
  args.insert(args.end(), {"--epilogue", "residualRmsNorm,hidden=4096"});
  auto fused = Run("results", args);
  ASSERT_EQ(fused.code, 0) << fused.output;
  auto f = nlohmann::json::parse(fused.output);
  EXPECT_EQ(f["bytes"], 8192);
  EXPECT_EQ(f["winner"], "oneshot-fused:blocks=32,mode=pull,threads=512");
  EXPECT_EQ(f["epilogue"]["kind"], "residualRmsNorm");
  EXPECT_EQ(f["epilogue"]["hidden"], kHidden);

  args.back() = "residualRmsNorm,hidden=8192";  // never tuned
  EXPECT_EQ(Run("results", args).code, 1);
  args.back() = "rmsnorm";
  auto bad = Run("results", args);
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--epilogue"), std::string::npos) << bad.output;
}

TEST_F(EpilogueCliTest, ResultsListsFusedProblemsUnderTheirOwnHeaderWithTokens) {
  auto all = Run("results", {"--fingerprint", kFused});
  ASSERT_EQ(all.code, 0) << all.output;
  EXPECT_NE(all.output.find("# allReduce bf16 sum, 4 ranks"), std::string::npos) << all.output;
  const auto header =
      all.output.find("# allReduce bf16 sum + residualRmsNorm hidden=4096, 4 ranks");
  ASSERT_NE(header, std::string::npos) << all.output;
  const std::string fused_part = all.output.substr(header);
  EXPECT_NE(fused_part.find("tokens"), std::string::npos) << fused_part;
  // 128 tokens x 4096 x 2 B = 1 MiB: the size, then the tokens column.
  EXPECT_NE(fused_part.find("1048576      128"), std::string::npos) << fused_part;

  auto only =
      Run("results", {"--fingerprint", kFused, "--epilogue", "residualRmsNorm,hidden=4096"});
  ASSERT_EQ(only.code, 0) << only.output;
  EXPECT_NE(only.output.find("+ residualRmsNorm hidden=4096"), std::string::npos) << only.output;
  EXPECT_EQ(only.output.find("# allGather"), std::string::npos) << only.output;
  auto json = Run("results", {"--fingerprint", kFused, "--epilogue", "none", "--json"});
  ASSERT_EQ(json.code, 0) << json.output;
  auto records = nlohmann::json::parse(json.output);
  EXPECT_EQ(records.size(), FixtureSet("x").size());
  for (const auto& r : records) EXPECT_FALSE(r.contains("epilogue")) << r;
}

TEST_F(EpilogueCliTest, JsonExportCarriesTheEpilogueField) {
  auto r = Run("export", {"--fingerprint", kFused, "--format", "json", "-o", dir_.File("w.json")});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.find("skipped"), std::string::npos) << "json keeps every record";
  auto records = nlohmann::json::parse(ReadFile(dir_.File("w.json")));
  std::size_t fused = 0;
  for (const auto& rec : records) {
    if (!rec.contains("epilogue")) continue;
    ++fused;
    EXPECT_EQ(rec["epilogue"]["kind"], "residualRmsNorm");
    EXPECT_EQ(rec["epilogue"]["hidden"], kHidden);
  }
  EXPECT_EQ(fused, 3u);
  EXPECT_EQ(records.size(), FixtureSet("x").size() + 3);
}

// The plugin ignores epilogue records: its formats must read exactly as without them, and
// the user hears once why some records are missing.
TEST_F(EpilogueCliTest, PluginFormatsSkipEpilogueRecordsWithOneNote) {
  for (const char* format : {"nccl-tuner-csv", "applied-json"}) {
    auto plain = Run("export", {"--fingerprint", kPlain, "--format", format});
    auto fused = Run("export", {"--fingerprint", kFused, "--format", format});
    ASSERT_EQ(plain.code, 0) << plain.output;
    ASSERT_EQ(fused.code, 0) << fused.output;
    const std::string note = "ccltune export: skipped 3 records with an epilogue";
    const auto at = fused.output.find(note);
    ASSERT_NE(at, std::string::npos) << format << "\n" << fused.output;
    EXPECT_EQ(fused.output.find(note, at + 1), std::string::npos) << "one note";
    EXPECT_NE(fused.output.find("NCCL's tuner cannot fuse an epilogue"), std::string::npos);
    EXPECT_EQ(plain.output.find("skipped"), std::string::npos) << plain.output;
    std::string without = WithoutLine(fused.output, "ccltune export: skipped");
    for (std::size_t i; (i = without.find(kFused)) != std::string::npos;)
      without.replace(i, std::string(kFused).size(), kPlain);
    EXPECT_EQ(without, plain.output) << format;
  }
}

TEST_F(EpilogueCliTest, HtmlReportGivesFusedProblemsTheirOwnSectionOverTokens) {
  auto r = Run("report", {"--fingerprint", kFused, "--html", dir_.File("r.html")});
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string html = ReadFile(dir_.File("r.html"));
  EXPECT_NE(html.find("allReduce bf16 sum + residualRmsNorm hidden=4096"), std::string::npos);
  EXPECT_NE(html.find("tokens (rows of 4096 elements)"), std::string::npos);
  EXPECT_NE(html.find("latency vs tokens"), std::string::npos);
  EXPECT_NE(html.find("*-fused run the epilogue in the all-reduce"), std::string::npos);
  // Plain groups keep the byte axis; four groups: allGather fp32, allReduce bf16 (plain and
  // fused), allReduce fp32.
  EXPECT_NE(html.find("message size (bytes)"), std::string::npos);
  auto records = FixtureSet(kFused);
  for (auto& rec : EpilogueRecords(kFused)) records.push_back(rec);
  EXPECT_EQ(worker::report::ReportGroups(records),
            (std::vector<std::string>{"allGather fp32 none", "allReduce bf16 sum",
                                      "allReduce bf16 sum + residualRmsNorm hidden=4096",
                                      "allReduce fp32 sum"}));
}

// `ccltune tune` flags: one line naming the flag, exit 2, before anything runs.
struct BadTuneFlags {
  std::string name;
  std::vector<std::string> args;
  std::string expect;
};

class EpilogueTuneFlagsTest : public ::testing::TestWithParam<BadTuneFlags> {};

TEST_P(EpilogueTuneFlagsTest, ExitsTwoWithOneLineNamingTheFlag) {
  TempDir dir("ccltune-epilogue-flags");
  std::vector<std::string> args{"tune", "--backend", "host", "--ranks", "2"};
  args.insert(args.end(), GetParam().args.begin(), GetParam().args.end());
  auto run = RunCcltune(args, {{"CCLTUNE_CACHE_DIR", dir.File("cache")}}, 30);
  EXPECT_EQ(run.code, 2) << run.output;
  std::string out = run.output;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 0) << "one line:\n" << run.output;
  EXPECT_NE(run.output.find(GetParam().expect), std::string::npos) << run.output;
}

INSTANTIATE_TEST_SUITE_P(
    Flags, EpilogueTuneFlagsTest,
    ::testing::Values(
        BadTuneFlags{"UnknownKind", {"--epilogue", "gelu,hidden=4096"}, "--epilogue: 'gelu'"},
        BadTuneFlags{
            "NoHidden", {"--epilogue", "residualRmsNorm"}, "--epilogue: hidden=H is required"},
        BadTuneFlags{"OddHidden",
                     {"--epilogue", "bias,hidden=4095"},
                     "--epilogue: hidden: 4095 is not allowed"},
        BadTuneFlags{"HiddenNotANumber", {"--epilogue", "bias,hidden=wide"}, "--epilogue: hidden"},
        BadTuneFlags{"EpsZero",
                     {"--epilogue", "residualRmsNorm,hidden=8,eps=0"},
                     "--epilogue: eps: is not allowed"},
        BadTuneFlags{
            "EpsOnBias", {"--epilogue", "bias,hidden=8,eps=1e-5"}, "--epilogue: 'eps=1e-5'"},
        BadTuneFlags{"UnknownKey", {"--epilogue", "bias,rows=8"}, "--epilogue: 'rows=8'"},
        BadTuneFlags{
            "TokensWithoutEpilogue", {"--tokens", "1,8"}, "--tokens: only with an epilogue"},
        BadTuneFlags{"RedOpUnknown", {"--redop", "mean"}, "--redop: 'mean' is not a known"},
        BadTuneFlags{"RedOpWithoutReducingOp",
                     {"--op", "allGather", "--redop", "avg"},
                     "--redop: only with a reducing collective"},
        BadTuneFlags{"AvgWithEpilogue",
                     {"--epilogue", "residualRmsNorm,hidden=4096", "--redop", "avg"},
                     "reduceOp"},
        BadTuneFlags{"TokensZero",
                     {"--epilogue", "residualRmsNorm,hidden=4096", "--tokens", "0,8"},
                     "--tokens: '0'"},
        BadTuneFlags{"TokensTooMany",
                     {"--epilogue", "residualRmsNorm,hidden=4096", "--tokens", "70000"},
                     "--tokens: '70000'"},
        BadTuneFlags{"TokensRangeBackwards",
                     {"--epilogue", "residualRmsNorm,hidden=4096", "--tokens", "64:8"},
                     "--tokens: min 64"},
        BadTuneFlags{"SizesWithEpilogue",
                     {"--epilogue", "residualRmsNorm,hidden=4096", "--sizes", "4096"},
                     "--sizes: not together with --epilogue"},
        BadTuneFlags{
            "SizesAndTokens",
            {"--epilogue", "residualRmsNorm,hidden=4096", "--tokens", "8", "--sizes", "4096"},
            "--sizes: not together with --epilogue"},
        BadTuneFlags{"EpilogueOnAllGather",
                     {"--epilogue", "residualRmsNorm,hidden=4096", "--op", "allGather"},
                     "--epilogue: allGather takes no epilogue"},
        // Well-formed flags reach the plan: the host backend's validation refuses it.
        BadTuneFlags{"HostBackend",
                     {"--epilogue", "residualRmsNorm,hidden=4096", "--tokens", "1,8"},
                     "collectives[0].epilogue: the host backend runs no epilogues"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ccltune::testing

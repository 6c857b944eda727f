// Process settings (issue 33: NCCL's network settings, read once per process) measured by rank
// processes of their own, shown without a GPU on the host backend: `ccltune tune` with the
// real binary, real rank processes and a real redis-server, and the test-only host settings
// of core/apply/process_setting.h. `test-env`'s processes get CCLTUNE_TEST_ADDED_OP_SECONDS=1
// (their ring reports every op 1 s slower), so a figure of over 1 s under its name can only
// come from processes started with its environment, while the job's own ring stays fast;
// `test-env-bad`'s processes refuse to start, which must fail that choice, not the job.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/redis/job_keys.h"
#include "core/results/result.h"
#include "tests/integration/ccltune_process.h"
#include "tests/support/redis_test.h"

namespace ccltune::testing {
namespace {

class ProcessSettingsTest : public RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    std::filesystem::create_directories(dir_.File("tmp"));
  }

  // `ccltune tune`, 2 host ranks, allReduce and allGather at two sizes, the ring (default),
  // direct and both test settings; the summary, or an empty object when the run failed.
  nlohmann::json Tune(const std::string& search, RunResult& run) {
    const std::string json = dir_.File("summary-" + search + ".json");
    run = RunCcltune(
        HostTuneArgs(2, redis_->url(),
                     {"--op", "allReduce,allGather", "--sizes", "4KiB,64KiB", "--iters", "3",
                      "--rounds", "3", "--warmup", "1", "--search", search, "--choices",
                      "ring,direct,test-env,test-env-bad", "--no-publish", "--json", json}),
        {{"CCLTUNE_ENABLE_TEST_CHOICES", "1"}, {"TMPDIR", dir_.File("tmp")}}, 300);
    return run.code == 0 ? nlohmann::json::parse(ReadFile(json)) : nlohmann::json::object();
  }

  // What every record must show, whatever the search.
  static void ExpectJoinedFigures(const nlohmann::json& summary) {
    ASSERT_EQ(summary.at("records").size(), 4u);
    for (const auto& j : summary.at("records")) {
      auto r = core::ResultFromJson(j);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      const core::ChoiceResult* ring = nullptr;
      const core::ChoiceResult* env = nullptr;
      const core::ChoiceResult* bad = nullptr;
      for (const auto& c : r->choices) {
        if (c.name == "ring") ring = &c;
        if (c.name == "test-env") env = &c;
        if (c.name == "test-env-bad") bad = &c;
      }
      ASSERT_TRUE(ring && env && bad) << r->Key();
      EXPECT_EQ(ring->status, core::ChoiceStatus::kOk) << r->Key() << ": " << ring->reason;
      EXPECT_LT(ring->time_us, 1e6) << r->Key() << ": the job's own ring got the setting's env";
      EXPECT_EQ(env->status, core::ChoiceStatus::kOk) << r->Key() << ": " << env->reason;
      EXPECT_GE(env->min_us, 1e6) << r->Key() << ": not measured under test-env's environment";
      EXPECT_LT(env->max_us, 1e6 + 1e5) << r->Key();
      EXPECT_GT(env->busbw_gbs, 0) << r->Key();
      EXPECT_EQ(bad->status, core::ChoiceStatus::kFailed) << r->Key();
      EXPECT_NE(bad->reason.find("exit code 2"), std::string::npos) << bad->reason;
      EXPECT_NE(bad->reason.find("CCLTUNE_PEER_MEMORY"), std::string::npos) << bad->reason;
      EXPECT_NE(r->winner, "test-env") << r->Key();
      EXPECT_NE(r->winner, "test-env-bad") << r->Key();
    }
    const auto& settings = summary.at("processSettings");
    ASSERT_EQ(settings.size(), 2u) << settings.dump();
    EXPECT_EQ(settings[0].value("name", ""), "test-env");
    EXPECT_EQ(settings[0].value("status", ""), "ok");
    EXPECT_EQ(settings[1].value("name", ""), "test-env-bad");
    EXPECT_EQ(settings[1].value("status", ""), "failed");
  }

  TempDir dir_{"ccltune-settings"};
};

TEST_F(ProcessSettingsTest, ExhaustiveJoinsEachSettingsOwnFiguresAndSurvivesAFailedOne) {
  RunResult run;
  const nlohmann::json summary = Tune("exhaustive", run);
  ASSERT_EQ(run.code, 0) << run.output;
  ExpectJoinedFigures(summary);
  EXPECT_NE(run.output.find("# test-env: own rank processes"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("# test-env-bad: own rank processes, "), std::string::npos);
  EXPECT_GE(summary.at("timing").value("processSettingsS", 0.0), 0.0);

  // test-env's processes were a job of their own: their summary measured only the ring.
  const std::string job = summary.value("jobId", "");
  auto text = client_->Command({"GET", core::JobKeys(job + ":setting0", 0).Summary()});
  ASSERT_TRUE(text.ok() && !text->is_nil()) << job;
  const auto own = nlohmann::json::parse(text->str);
  ASSERT_EQ(own.at("records").size(), 4u);
  for (const auto& j : own.at("records")) {
    ASSERT_EQ(j.at("choices").size(), 1u) << j.dump();
    EXPECT_EQ(j.at("choices")[0].value("name", ""), "ring");
  }
  EXPECT_EQ(own.value("published", -1), 0);

  // The failed setting's output is kept where the reason points; the good one's is removed.
  int kept = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir_.File("tmp"))) {
    const std::string name = f.path().filename().string();
    if (name.find("_setting") == std::string::npos) continue;
    EXPECT_NE(name.find("_setting1-a0-r"), std::string::npos) << name;
    EXPECT_NE(ReadFile(f.path().string()).find("CCLTUNE_PEER_MEMORY"), std::string::npos);
    ++kept;
  }
  EXPECT_EQ(kept, 2);  // one per rank
}

// The adaptive search takes the settings' figures as they are (they are fully measured in
// their processes): never pruned, never re-measured here.
TEST_F(ProcessSettingsTest, AdaptiveTakesTheSameFigures) {
  RunResult run;
  const nlohmann::json summary = Tune("adaptive", run);
  ASSERT_EQ(run.code, 0) << run.output;
  ExpectJoinedFigures(summary);
}

}  // namespace
}  // namespace ccltune::testing

// Bad flags and bad plans: exit code 2 and exactly one line that names the problem.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "tests/integration/ccltune_process.h"

namespace ccltune::testing {
namespace {

struct BadInput {
  std::string name;
  std::vector<std::string> args;                // "{plan}" is replaced by the plan file's path
  std::string plan;                             // YAML written to the plan file, if any
  std::string expect;                           // substring of the one error line
  std::map<std::string, std::string> env = {};  // more environment for the process
};

class BadInputTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputTest, ExitsTwoWithOneLineNamingTheField) {
  TempDir dir("ccltune-bad");
  const auto& p = GetParam();
  std::vector<std::string> args;
  const std::string plan = WritePlan(dir, "plan.yaml", p.plan);
  for (const auto& a : p.args) args.push_back(a == "{plan}" ? plan : a);
  auto env = p.env;
  env["CCLTUNE_CACHE_DIR"] = dir.File("cache");
  auto run = RunCcltune(args, env, 30);
  EXPECT_EQ(run.code, 2) << run.output;
  const auto lines = NonEmptyLines(run.output);
  ASSERT_EQ(lines.size(), 1u) << run.output;
  EXPECT_NE(lines[0].find(p.expect), std::string::npos) << lines[0];
  // A plan file is named once, not "plan.yaml: plan.yaml: …" (issue 24).
  const std::string name = "plan.yaml";
  std::size_t at = lines[0].find(name);
  EXPECT_TRUE(at == std::string::npos || lines[0].find(name, at + 1) == std::string::npos)
      << lines[0];
}

const std::vector<std::string> kTune{"tune", "--backend", "host", "--ranks", "2"};

std::vector<std::string> Tune(std::vector<std::string> more) {
  std::vector<std::string> a = kTune;
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

INSTANTIATE_TEST_SUITE_P(
    Flags, BadInputTest,
    ::testing::Values(
        BadInput{"UnknownOp", Tune({"--op", "allreduce"}), "",
                 "--op: 'allreduce' is not a known op"},
        BadInput{"UnknownDtype", Tune({"--dtypes", "fp64"}), "", "--dtypes: 'fp64'"},
        BadInput{"ZeroSize", Tune({"--sizes", "0"}), "", "--sizes"},
        BadInput{"NegativeSize", Tune({"--sizes", "-4096"}), "", "--sizes"},
        BadInput{"MinAboveMax", Tune({"--sizes", "4MiB:1KiB"}), "", "--sizes: min 4MiB is larger"},
        BadInput{"FactorBelowTwo", Tune({"--sizes", "1KiB:4MiB:1"}), "", "--sizes: factor"},
        BadInput{"SizeAboveCap", Tune({"--sizes", "8GiB"}), "", "exceeds the size cap of 1GiB"},
        BadInput{"DecimalUnit", Tune({"--sizes", "1KB"}), "", "KiB"},
        BadInput{"UnknownChoice", Tune({"--choices", "warp-speed"}), "", "--choices"},
        BadInput{"NcclChoiceOnHost", Tune({"--choices", "nccl-symm"}), "", "--choices"},
        BadInput{"ZeroRanks", {"tune", "--backend", "host", "--ranks", "0"}, "", "--ranks"},
        BadInput{"UnknownBackend", {"tune", "--backend", "gpu"}, "", "--backend"},
        BadInput{"ZeroIters", Tune({"--iters", "0"}), "", "--iters"},
        BadInput{"UnknownSearch", Tune({"--search", "fast"}), "",
                 "--search: 'fast' is not a known search (allowed: exhaustive, adaptive)"},
        BadInput{"UnknownFlag", Tune({"--turbo"}), "", "--turbo"},
        BadInput{"MissingPlanFile", Tune({"--plan", "/nonexistent/plan.yaml"}), "",
                 "/nonexistent/plan.yaml"},
        BadInput{"WorkerWithoutWorldSize",
                 {"worker", "--job-id", "j", "--redis", "redis://127.0.0.1:1/0", "--plan", "p"},
                 "",
                 "--world-size"},
        BadInput{"BadRedisUrl", Tune({"--redis", "http://localhost:6379"}), "", "--redis"},
        BadInput{"EmulatedNodesNotDividingRanks", Tune({"--emulate-nodes", "3"}), "",
                 "--emulate-nodes: 3 emulated nodes do not split 2 ranks evenly"},
        BadInput{"NodeNameDisagreesWithNcclHostId",
                 Tune({"--op", "allReduce", "--sizes", "1KiB"}),
                 "",
                 "NCCL_HOSTID='node-b' differs from CCLTUNE_NODE_NAME='node-a'",
                 {{"CCLTUNE_NODE_NAME", "node-a"}, {"NCCL_HOSTID", "node-b"}}},
        // Checked before the GPU count, so it is caught on this GPU-less machine too.
        BadInput{"PeerMemoryTypo",
                 {"tune", "--backend", "nccl", "--ranks", "2"},
                 "",
                 "CCLTUNE_PEER_MEMORY: 'off' is not one of 0",
                 {{"CCLTUNE_PEER_MEMORY", "off"}}},
        BadInput{"BufferRotationTypo",
                 Tune({}),
                 "",
                 "CCLTUNE_BUFFER_ROTATION: 'no' is not one of 0",
                 {{"CCLTUNE_BUFFER_ROTATION", "no"}}}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Plans, BadInputTest,
    ::testing::Values(
        BadInput{"PlanUnknownSearch", Tune({"--plan", "{plan}"}),
                 "collectives: [{op: allReduce, sizes: [4096]}]\nsearch: greedy",
                 "search: 'greedy' is not a known search (allowed: exhaustive, adaptive)"},
        BadInput{"PlanEmulatedNodesNotDividingRanks", Tune({"--plan", "{plan}"}),
                 "collectives: [{op: allReduce, sizes: [4096]}]\nemulatedNodes: 4",
                 "emulatedNodes (plan file): 4 emulated nodes do not split 2 ranks evenly"},
        BadInput{"PlanNegativeEmulatedNodes", Tune({"--plan", "{plan}"}),
                 "collectives: [{op: allReduce, sizes: [4096]}]\nemulatedNodes: -1",
                 "emulatedNodes: -1 is out of range"},
        BadInput{"PlanUnknownOp", Tune({"--plan", "{plan}"}),
                 "collectives: [{op: allReduse, sizes: [4096]}]", "collectives[0].op"},
        BadInput{"PlanReduceOpOnAllGather", Tune({"--plan", "{plan}"}),
                 "collectives: [{op: allGather, reduceOp: sum, sizes: [4096]}]",
                 "collectives[0].reduceOp"},
        BadInput{"PlanMinAboveMax", Tune({"--plan", "{plan}"}),
                 "collectives: [{op: allReduce, sizes: {min: 1MiB, max: 1KiB}}]",
                 "collectives[0].sizes"},
        BadInput{"PlanFactorOne", Tune({"--plan", "{plan}"}),
                 "collectives: [{op: allReduce, sizes: {min: 1KiB, max: 1MiB, factor: 1}}]",
                 "collectives[0].sizes.factor"},
        BadInput{"PlanNegativeSize", Tune({"--plan", "{plan}"}),
                 "collectives: [{op: allReduce, sizes: [-1]}]", "collectives[0].sizes"},
        BadInput{"PlanUnknownField", Tune({"--plan", "{plan}"}),
                 "collectives: [{op: allReduce, dtype: fp32, sizes: [4096]}]",
                 "collectives[0].dtype"},
        BadInput{"PlanZeroRounds", Tune({"--plan", "{plan}"}),
                 "collectives: [{op: allReduce, sizes: [4096]}]\nbenchmark: {rounds: 0}",
                 "benchmark.rounds"},
        BadInput{"PlanEmptyDtypes", Tune({"--plan", "{plan}"}),
                 "collectives: [{op: allReduce, dtypes: [], sizes: [4096]}]",
                 "collectives[0].dtypes"},
        BadInput{"PlanHugeSize", Tune({"--plan", "{plan}"}),
                 "collectives: [{op: allReduce, sizes: [64GiB]}]", "collectives[0].sizes"},
        BadInput{"PlanNoCollectives", Tune({"--plan", "{plan}"}), "collectives: []", "collectives"},
        BadInput{"PlanBrokenYaml", Tune({"--plan", "{plan}"}), "collectives: [{op: allReduce",
                 "line"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ccltune::testing

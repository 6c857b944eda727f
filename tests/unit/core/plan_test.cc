#include "core/plan/plan.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/plan/problem.h"
#include "tests/support/temp_dir.h"

namespace ccltune::core {
namespace {

constexpr char kYaml[] = R"(
collectives:
- op: allReduce
  dtypes: [bf16, fp32]
  reduceOp: max
  sizes: {min: 1KiB, max: 64KiB, factor: 4}
  choices: ["nccl:proto=ll,algo=ring", nccl]
- op: allGather
  dtypes: [fp16]
  sizes: [1MiB, 4096, "2KiB", 4096]
benchmark:
  warmupIters: 0
  iters: 7
  rounds: 4
  cudaGraph: true
  preSyncWindowSeconds: 2.5
  rendezvousTimeoutSeconds: 60
  choiceTimeoutSeconds: 10
  noiseThresholdPercent: 0
)";

TEST(ParsePlan, ReadsYaml) {
  auto plan = ParsePlan(kYaml);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->collectives.size(), 2u);
  const auto& ar = plan->collectives[0];
  EXPECT_EQ(ar.op, Op::kAllReduce);
  EXPECT_EQ(ar.dtypes, (std::vector<Dtype>{Dtype::kBf16, Dtype::kFp32}));
  EXPECT_EQ(ar.reduce_op, RedOp::kMax);
  EXPECT_EQ(ar.sizes, (std::vector<std::uint64_t>{1024, 4096, 16384, 65536}));
  EXPECT_EQ(ar.choices, (std::vector<std::string>{"nccl:algo=ring,proto=ll", "nccl"}));
  const auto& ag = plan->collectives[1];
  EXPECT_EQ(ag.reduce_op, RedOp::kNone);
  EXPECT_EQ(ag.sizes, (std::vector<std::uint64_t>{2048, 4096, 1 << 20}));
  const auto& b = plan->benchmark;
  EXPECT_EQ(b.warmup_iters, 0);
  EXPECT_EQ(b.iters, 7);
  EXPECT_EQ(b.rounds, 4);
  EXPECT_TRUE(b.cuda_graph);
  EXPECT_DOUBLE_EQ(b.pre_sync_window_seconds, 2.5);
  EXPECT_DOUBLE_EQ(b.rendezvous_timeout_seconds, 60);
  EXPECT_DOUBLE_EQ(b.choice_timeout_seconds, 10);
  EXPECT_DOUBLE_EQ(b.noise_threshold_percent, 0);
}

TEST(ParsePlan, ReadsJsonAndFillsDefaults) {
  auto plan = ParsePlan(R"({"collectives": [{"op": "reduceScatter", "sizes": [4096]}]})");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const auto& c = plan->collectives[0];
  EXPECT_EQ(c.op, Op::kReduceScatter);
  EXPECT_EQ(c.dtypes, std::vector<Dtype>{Dtype::kFp32});
  EXPECT_EQ(c.reduce_op, RedOp::kSum);
  EXPECT_TRUE(c.choices.empty());
  EXPECT_EQ(plan->benchmark.iters, 20);
  EXPECT_DOUBLE_EQ(plan->benchmark.noise_threshold_percent, 3);
}

TEST(ParsePlan, NullBenchmarkAndChoicesMeanDefaults) {
  auto plan = ParsePlan("collectives: [{op: allReduce, sizes: [1KiB], choices: null}]\nbenchmark:");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_TRUE(plan->collectives[0].choices.empty());
  EXPECT_EQ(plan->benchmark.rounds, 5);
}

TEST(ParsePlan, RangeStopsAtMaxAndDefaultsFactorTwo) {
  auto plan = ParsePlan("collectives: [{op: broadcast, sizes: {min: 1000, max: 9000}}]");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->collectives[0].sizes, (std::vector<std::uint64_t>{1000, 2000, 4000, 8000}));
}

TEST(ParsePlan, ReadsAWholeCollectiveTuningJob) {
  constexpr char kJob[] = R"(
apiVersion: ccltune.io/v1alpha1
kind: CollectiveTuningJob
metadata: {name: demo}
spec:
  worldSize: 4
  gpusPerPod: 4
  backend: host
  collectives:
  - {op: allToAll, dtypes: [int8], sizes: [1KiB], choices: [pairwise]}
  benchmark: {iters: 3}
)";
  auto plan = ParsePlan(kJob);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->collectives[0].op, Op::kAllToAll);
  EXPECT_EQ(plan->benchmark.iters, 3);
  // spec.backend restricts choices, and paths start with "spec.".
  auto bad = ParsePlan(std::string(kJob).replace(std::string(kJob).find("pairwise"), 8, "nccl"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("spec.collectives[0].choices[0]: ", 0), 0u)
      << bad.status().message();
}

TEST(ParsePlan, CanonicalJsonRoundTrips) {
  auto plan = ParsePlan(kYaml);
  ASSERT_TRUE(plan.ok());
  const std::string json = PlanToJson(*plan);
  auto again = ParsePlan(json);
  ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << json;
  EXPECT_EQ(PlanToJson(*again), json);
  EXPECT_EQ(again->collectives[1].sizes, plan->collectives[1].sizes);
  EXPECT_EQ(again->collectives[0].reduce_op, RedOp::kMax);
  EXPECT_DOUBLE_EQ(again->benchmark.pre_sync_window_seconds, 2.5);
}

TEST(ParsePlan, SearchIsAdaptiveUnlessAskedAndSurvivesTheConfigMap) {
  auto plan = ParsePlan(kYaml);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->search, Search::kAdaptive);
  auto exhaustive = ParsePlan(std::string(kYaml) + "search: exhaustive\n");
  ASSERT_TRUE(exhaustive.ok()) << exhaustive.status().ToString();
  EXPECT_EQ(exhaustive->search, Search::kExhaustive);
  EXPECT_EQ(ParsePlan(PlanToJson(*exhaustive))->search, Search::kExhaustive);
  auto job = ParsePlan(
      "kind: CollectiveTuningJob\nspec:\n  search: exhaustive\n"
      "  collectives: [{op: allReduce, sizes: [1KiB]}]");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->search, Search::kExhaustive);
}

// spec.emulatedNodes (issue 33): off unless given, kept through the ConfigMap, and plans
// without it keep their canonical text (no key written for 0).
TEST(ParsePlan, EmulatedNodesAreOffUnlessAskedAndSurviveTheConfigMap) {
  auto plan = ParsePlan(kYaml);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->emulated_nodes, 0);
  EXPECT_EQ(PlanToJson(*plan).find("emulatedNodes"), std::string::npos);
  auto job = ParsePlan(
      "kind: CollectiveTuningJob\nspec:\n  emulatedNodes: 2\n"
      "  collectives: [{op: allReduce, sizes: [1KiB]}]");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->emulated_nodes, 2);
  EXPECT_EQ(ParsePlan(PlanToJson(*job))->emulated_nodes, 2);
  auto bad = ParsePlan(
      "kind: CollectiveTuningJob\nspec:\n  emulatedNodes: 5000\n"
      "  collectives: [{op: allReduce, sizes: [1KiB]}]");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "spec.emulatedNodes: 5000 is not allowed (must be an integer 0..1024)");
}

TEST(DefaultPlan, HostAndNcclAreValidAndAsDocumented) {
  const Plan host = DefaultPlan("host");
  EXPECT_TRUE(ValidatePlan(host, {}, "host").ok());
  ASSERT_EQ(host.collectives.size(), 3u);
  EXPECT_EQ(host.collectives[1].op, Op::kAllGather);
  EXPECT_EQ(host.collectives[1].reduce_op, RedOp::kNone);
  EXPECT_EQ(
      host.collectives[0].sizes,
      (std::vector<std::uint64_t>{1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22}));
  EXPECT_EQ(host.benchmark.warmup_iters, 3);
  EXPECT_EQ(host.benchmark.iters, 10);
  EXPECT_EQ(host.benchmark.rounds, 5);
  EXPECT_EQ(ExpandPlan(host).size(), 21u);
  const Plan nccl = DefaultPlan("nccl");
  EXPECT_TRUE(ValidatePlan(nccl, {}, "nccl").ok());
  EXPECT_EQ(nccl.collectives[0].dtypes, std::vector<Dtype>{Dtype::kBf16});
  EXPECT_EQ(nccl.collectives[0].sizes.back(), 256ull << 20);
  EXPECT_EQ(nccl.collectives[0].sizes.size(), 19u);
  EXPECT_EQ(nccl.benchmark.iters, 20);
  // The default plans survive the ConfigMap round trip too.
  EXPECT_EQ(PlanToJson(*ParsePlan(PlanToJson(nccl))), PlanToJson(nccl));
}

TEST(ExpandPlan, ProblemsInPlanOrderWithKeys) {
  auto plan = ParsePlan(kYaml);
  ASSERT_TRUE(plan.ok());
  const auto problems = ExpandPlan(*plan);
  ASSERT_EQ(problems.size(), 2u * 4 + 3);
  EXPECT_EQ(problems[0].Key(), "allReduce:bf16:max:1024");
  EXPECT_EQ(problems[3].Key(), "allReduce:bf16:max:65536");
  EXPECT_EQ(problems[4].Key(), "allReduce:fp32:max:1024");
  EXPECT_EQ(problems[8].Key(), "allGather:fp16:none:2048");
  EXPECT_EQ(problems[0].choices.size(), 2u);
}

constexpr const char* kEpiloguePlan = R"(
collectives:
- op: allReduce
  dtypes: [bf16, fp32]
  epilogue: {kind: residualRmsNorm, hidden: 4096, eps: 1.0e-6}
  tokens: [128, 1, 8, 8]
- op: allReduce
  dtypes: [fp16]
  epilogue: {kind: bias, hidden: 8192}
  tokens: {min: 1, max: 64, factor: 8}
- op: allReduce
  epilogue: {kind: none}
  sizes: [1KiB]
)";

TEST(ParsePlan, EpilogueEntriesAreRowsOfHidden) {
  auto plan = ParsePlan(kEpiloguePlan);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const CollectiveSpec& norm = plan->collectives[0];
  EXPECT_EQ(norm.epilogue.kind, EpilogueKind::kResidualRmsNorm);
  EXPECT_EQ(norm.epilogue.hidden, 4096);
  EXPECT_DOUBLE_EQ(norm.epilogue.eps, 1e-6);
  EXPECT_EQ(norm.tokens, (std::vector<std::uint64_t>{1, 8, 128}));  // sorted, deduplicated
  EXPECT_TRUE(norm.sizes.empty());
  EXPECT_EQ(plan->collectives[1].tokens, (std::vector<std::uint64_t>{1, 8, 64}));
  EXPECT_DOUBLE_EQ(plan->collectives[1].epilogue.eps, kDefaultRmsNormEps);
  EXPECT_TRUE(plan->collectives[2].epilogue.none());
  const auto problems = ExpandPlan(*plan);
  ASSERT_EQ(problems.size(), 2u * 3 + 3 + 1);
  // bytes = tokens x hidden x dtype size, per dtype.
  EXPECT_EQ(problems[0].Key(), "allReduce:bf16:sum:8192:epilogue=residualRmsNorm,hidden=4096");
  EXPECT_EQ(problems[3].Key(), "allReduce:fp32:sum:16384:epilogue=residualRmsNorm,hidden=4096");
  EXPECT_EQ(problems[2].epilogue.Tokens(problems[2].bytes, problems[2].dtype), 128u);
  EXPECT_EQ(problems[6].Key(), "allReduce:fp16:sum:16384:epilogue=bias,hidden=8192");
  EXPECT_EQ(problems[9].Key(), "allReduce:fp32:sum:1024");
  // The ConfigMap form keeps the epilogue and its tokens.
  const std::string json = PlanToJson(*plan);
  auto again = ParsePlan(json);
  ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << json;
  EXPECT_EQ(PlanToJson(*again), json);
  EXPECT_TRUE(again->collectives[0].epilogue == norm.epilogue);
  EXPECT_EQ(again->collectives[0].tokens, norm.tokens);
  // The nccl backend accepts the fused choices by name; the host backend no epilogue.
  EXPECT_TRUE(ValidatePlan(*plan, {}, "nccl").ok());
  EXPECT_FALSE(ValidatePlan(*plan, {}, "host").ok());
}

TEST(Epilogue, KeyPartsParseBack) {
  Epilogue e{EpilogueKind::kResidualRmsNorm, 8192, 1e-5};
  EXPECT_EQ(e.KeyPart(), "epilogue=residualRmsNorm,hidden=8192");
  EXPECT_EQ(e.Label(), "residualRmsNorm,hidden=8192");
  EXPECT_EQ(Epilogue{}.KeyPart(), "");
  EXPECT_EQ(Epilogue{}.Label(), "none");
  auto back = ParseEpilogueKeyPart(e.KeyPart());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->kind, e.kind);
  EXPECT_EQ(back->hidden, 8192);
  EXPECT_EQ(ParseEpilogueKeyPart("bias,hidden=64")->kind, EpilogueKind::kBias);
  EXPECT_TRUE(ParseEpilogueKeyPart("")->none());
  EXPECT_FALSE(ParseEpilogueKeyPart("bias").ok());
  EXPECT_FALSE(ParseEpilogueKeyPart("bias,hidden=63").ok());
  EXPECT_FALSE(ParseEpilogueKeyPart("gelu,hidden=64").ok());
  EXPECT_EQ(e.Tokens(3 * 8192 * 2, Dtype::kBf16), 3u);
  EXPECT_EQ(e.Tokens(8192, Dtype::kBf16), 0u);  // half a row
}

TEST(LoadPlanFile, ReadsAFileAndNamesItInErrors) {
  testing::TempDir dir;
  std::ofstream(dir.File("plan.yaml")) << "collectives: [{op: allReduce, sizes: [1KiB]}]\n";
  EXPECT_TRUE(LoadPlanFile(dir.File("plan.yaml")).ok());
  std::ofstream(dir.File("bad.yaml")) << "collectives: [{op: allreduce, sizes: [1KiB]}]\n";
  auto bad = LoadPlanFile(dir.File("bad.yaml"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.yaml: collectives[0].op:"), std::string::npos)
      << bad.status().message();
  auto missing = LoadPlanFile(dir.File("nope.yaml"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("nope.yaml"), std::string::npos);
}

}  // namespace
}  // namespace ccltune::core

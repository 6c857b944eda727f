// Every bad plan gives one InvalidArgument line that starts with the field path.
#include <gtest/gtest.h>

#include "core/plan/plan.h"

namespace ccltune::core {
namespace {

struct BadPlan {
  const char* name;
  const char* text;
  const char* path;  // the message starts with "<path>: "
  const char* says;  // and contains this
};

// One line per collective keeps the table readable.
#define C1(body) "collectives: [" body "]"

const BadPlan kBadPlans[] = {
    {"unknown op", C1("{op: allreduce, sizes: [1KiB]}"), "collectives[0].op",
     "allowed: allReduce, allGather"},
    {"missing op", C1("{sizes: [1KiB]}"), "collectives[0].op", "is required"},
    {"unknown dtype", C1("{op: allReduce, dtypes: [fp64], sizes: [1KiB]}"),
     "collectives[0].dtypes[0]", "allowed: fp32, fp16, bf16, int32, int8"},
    {"misspelled field", C1("{op: allReduce, dtype: [fp32], sizes: [1KiB]}"),
     "collectives[0].dtype", "unknown field (did you mean dtypes?"},
    {"unknown top field", "collectives: [{op: allReduce, sizes: [1KiB]}]\nbenchmarks: {}",
     "benchmarks", "did you mean benchmark?"},
    {"empty dtypes", C1("{op: allReduce, dtypes: [], sizes: [1KiB]}"), "collectives[0].dtypes",
     "must not be empty"},
    {"duplicate dtype", C1("{op: allReduce, dtypes: [fp32, bf16, fp32], sizes: [1KiB]}"),
     "collectives[0].dtypes[2]", "listed twice"},
    {"zero size", C1("{op: allReduce, sizes: [0]}"), "collectives[0].sizes[0]", "must be > 0"},
    {"negative size", C1("{op: allReduce, sizes: [1KiB, -5]}"), "collectives[0].sizes[1]",
     "negative"},
    {"decimal unit", C1("{op: allReduce, sizes: [1KB]}"), "collectives[0].sizes[0]", "use KiB"},
    {"min > max", C1("{op: allGather, sizes: {min: 64MiB, max: 1KiB}}"), "collectives[0].sizes.min",
     "64MiB is larger than max 1KiB"},
    {"factor 1",
     "collectives:\n- {op: allReduce, sizes: [1KiB]}\n"
     "- {op: allReduce, sizes: {min: 1KiB, max: 1MiB, factor: 1}}",
     "collectives[1].sizes.factor", "1 is not allowed (must be an integer >= 2)"},
    {"fractional factor", C1("{op: allReduce, sizes: {min: 1KiB, max: 1MiB, factor: 1.5}}"),
     "collectives[0].sizes.factor", "must be an integer >= 2"},
    {"range without max", C1("{op: allReduce, sizes: {min: 1KiB}}"), "collectives[0].sizes.max",
     "is required"},
    {"size beyond cap", C1("{op: allReduce, sizes: [2GiB]}"), "collectives[0].sizes[0]",
     "must be <= 1GiB, the configured cap"},
    {"range beyond cap", C1("{op: allReduce, sizes: {min: 1KiB, max: 4GiB}}"),
     "collectives[0].sizes.max", "must be <= 1GiB"},
    {"too many sizes", C1("{op: allReduce, sizes: {min: 1, max: 1GiB, factor: 2}}"),
     "collectives[0].sizes", "more than 16 sizes"},
    {"missing sizes", C1("{op: allReduce}"), "collectives[0].sizes", "is required"},
    {"scalar sizes", C1("{op: allReduce, sizes: 1KiB}"), "collectives[0].sizes",
     "must be {min, max, factor} or a non-empty list"},
    {"reduceOp on allGather", C1("{op: allGather, reduceOp: sum, sizes: [1KiB]}"),
     "collectives[0].reduceOp", "not allowed for allGather"},
    {"unknown reduceOp", C1("{op: allReduce, reduceOp: mean, sizes: [1KiB]}"),
     "collectives[0].reduceOp", "allowed: sum, max, min, prod, avg"},
    {"unknown choice", C1("{op: allReduce, sizes: [1KiB], choices: [fastest]}"),
     "collectives[0].choices[0]", "not a known choice"},
    {"bad choice param", C1("{op: allReduce, sizes: [1KiB], choices: ['nccl:algo=nvls']}"),
     "collectives[0].choices[0]", "ring|tree"},
    {"duplicate choice", C1("{op: allReduce, sizes: [1KiB], choices: [ring, direct, ring]}"),
     "collectives[0].choices[2]", "listed twice"},
    {"no collectives", "collectives: []", "collectives", "non-empty list"},
    {"collectives missing", "benchmark: {iters: 1}", "collectives", "non-empty list"},
    {"zero iters", "collectives: [{op: allReduce, sizes: [1KiB]}]\nbenchmark: {iters: 0}",
     "benchmark.iters", "0 is not allowed (must be an integer 1..100000)"},
    {"negative warmup",
     "collectives: [{op: allReduce, sizes: [1KiB]}]\n"
     "benchmark: {warmupIters: -1}",
     "benchmark.warmupIters", "-1 is not allowed"},
    {"zero rounds", "collectives: [{op: allReduce, sizes: [1KiB]}]\nbenchmark: {rounds: 0}",
     "benchmark.rounds", "must be an integer 1..1000"},
    {"text iters", "collectives: [{op: allReduce, sizes: [1KiB]}]\nbenchmark: {iters: many}",
     "benchmark.iters", "'many' is not an integer"},
    {"zero timeout",
     "collectives: [{op: allReduce, sizes: [1KiB]}]\n"
     "benchmark: {choiceTimeoutSeconds: 0}",
     "benchmark.choiceTimeoutSeconds", "must be > 0"},
    {"huge rendezvous timeout",
     "collectives: [{op: allReduce, sizes: [1KiB]}]\n"
     "benchmark: {rendezvousTimeoutSeconds: 1e9}",
     "benchmark.rendezvousTimeoutSeconds", "must be > 0 and <= 86400"},
    {"negative presync",
     "collectives: [{op: allReduce, sizes: [1KiB]}]\n"
     "benchmark: {preSyncWindowSeconds: -2}",
     "benchmark.preSyncWindowSeconds", "must be > 0"},
    {"noise 100",
     "collectives: [{op: allReduce, sizes: [1KiB]}]\n"
     "benchmark: {noiseThresholdPercent: 100}",
     "benchmark.noiseThresholdPercent", "must be >= 0 and < 100"},
    {"bool as word", "collectives: [{op: allReduce, sizes: [1KiB]}]\nbenchmark: {cudaGraph: 1}",
     "benchmark.cudaGraph", "must be true or false"},
    {"unknown benchmark field",
     "collectives: [{op: allReduce, sizes: [1KiB]}]\n"
     "benchmark: {iterations: 5}",
     "benchmark.iterations", "allowed: warmupIters, iters, rounds"},
    {"too many problems",
     C1("{op: allReduce, dtypes: [fp32, fp16, bf16, int32, int8], "
        "sizes: {min: 1, max: 32768}}"),
     "collectives", "80 problems"},
    {"epilogue on allGather",
     C1("{op: allGather, epilogue: {kind: bias, hidden: 4096}, tokens: [1]}"),
     "collectives[0].epilogue", "only allReduce takes an epilogue"},
    {"unknown epilogue kind", C1("{op: allReduce, epilogue: {kind: layerNorm, hidden: 64}}"),
     "collectives[0].epilogue.kind", "allowed: none, bias, residualRmsNorm"},
    {"epilogue without kind", C1("{op: allReduce, epilogue: {hidden: 64}, tokens: [1]}"),
     "collectives[0].epilogue.kind", "is required"},
    {"epilogue without hidden", C1("{op: allReduce, epilogue: {kind: bias}, tokens: [1]}"),
     "collectives[0].epilogue.hidden", "is required"},
    {"hidden not a multiple of 8",
     C1("{op: allReduce, epilogue: {kind: residualRmsNorm, hidden: 4095}, tokens: [1]}"),
     "collectives[0].epilogue.hidden", "must be a multiple of 8 in 8..16384"},
    {"hidden too large", C1("{op: allReduce, epilogue: {kind: bias, hidden: 32768}, tokens: [1]}"),
     "collectives[0].epilogue.hidden", "32768 is not allowed"},
    {"zero eps",
     C1("{op: allReduce, epilogue: {kind: residualRmsNorm, hidden: 64, eps: 0}, tokens: [1]}"),
     "collectives[0].epilogue.eps", "must be > 0 and < 1"},
    {"eps on bias",
     C1("{op: allReduce, epilogue: {kind: bias, hidden: 64, eps: 1e-5}, tokens: [1]}"),
     "collectives[0].epilogue.eps", "only residualRmsNorm takes eps"},
    {"unknown epilogue field",
     C1("{op: allReduce, epilogue: {kind: bias, hidden: 64, gamma: 1}, tokens: [1]}"),
     "collectives[0].epilogue.gamma", "unknown field"},
    {"sizes with an epilogue",
     C1("{op: allReduce, epilogue: {kind: bias, hidden: 64}, sizes: [1KiB]}"),
     "collectives[0].sizes", "not allowed with an epilogue"},
    {"epilogue without tokens", C1("{op: allReduce, epilogue: {kind: bias, hidden: 64}}"),
     "collectives[0].tokens", "is required"},
    {"tokens without an epilogue", C1("{op: allReduce, tokens: [1, 8]}"), "collectives[0].tokens",
     "only with an epilogue"},
    {"zero tokens", C1("{op: allReduce, epilogue: {kind: bias, hidden: 64}, tokens: [0]}"),
     "collectives[0].tokens[0]", "must be an integer 1..65536"},
    {"token range beyond the byte cap",
     C1("{op: allReduce, dtypes: [fp32], epilogue: {kind: bias, hidden: 16384}, "
        "tokens: {min: 1024, max: 65536}}"),
     "collectives[0].tokens[5]", "32768 tokens x hidden 16384 of fp32 is 2GiB"},
    {"integer dtype with an epilogue",
     C1("{op: allReduce, dtypes: [bf16, int8], epilogue: {kind: bias, hidden: 64}, tokens: [1]}"),
     "collectives[0].dtypes[1]", "not allowed with an epilogue (fp32, fp16, bf16)"},
    {"max with an epilogue",
     C1("{op: allReduce, reduceOp: max, epilogue: {kind: bias, hidden: 64}, tokens: [1]}"),
     "collectives[0].reduceOp", "must be sum"},
    {"host job with an epilogue",
     "kind: CollectiveTuningJob\nspec:\n  backend: host\n  collectives:\n"
     "  - {op: allReduce, epilogue: {kind: bias, hidden: 64}, tokens: [1]}",
     "spec.collectives[0].epilogue", "the host backend runs no epilogues"},
    {"unknown search", "collectives: [{op: allReduce, sizes: [1KiB]}]\nsearch: greedy", "search",
     "'greedy' is not a known search (allowed: exhaustive, adaptive)"},
    {"search not a string", "collectives: [{op: allReduce, sizes: [1KiB]}]\nsearch: [adaptive]",
     "search", "must be a string"},
    {"job with bad search",
     "kind: CollectiveTuningJob\nspec:\n  search: fast\n"
     "  collectives: [{op: allReduce, sizes: [1KiB]}]",
     "spec.search", "allowed: exhaustive, adaptive"},
    {"not a mapping", "- op: allReduce", "plan", "must be a mapping"},
    {"syntax error", "collectives: [{op: allReduce, sizes: [1KiB]}", "plan",
     "not valid YAML/JSON at line"},
    {"empty document", "", "plan", "empty"},
    {"job of wrong kind", "apiVersion: ccltune.io/v1alpha1\nkind: Job\nspec: {}", "kind",
     "must be CollectiveTuningJob"},
    {"job with bad field",
     "kind: CollectiveTuningJob\nspec:\n  collectives:\n"
     "  - {op: allReduce, sizes: [1KiB], dtypes: [fp8]}",
     "spec.collectives[0].dtypes[0]", "not a known dtype"},
    {"job with bad backend", "kind: CollectiveTuningJob\nspec: {backend: gpu, collectives: []}",
     "spec.backend", "not one of nccl, host"},
};

class BadPlanTest : public ::testing::TestWithParam<BadPlan> {};

TEST_P(BadPlanTest, OneLineNamingTheField) {
  const BadPlan& bad = GetParam();
  PlanLimits limits;
  limits.max_sizes_per_collective = 16;
  limits.max_problems = 64;
  auto plan = ParsePlan(bad.text, limits);
  ASSERT_FALSE(plan.ok()) << bad.name << " parsed";
  const std::string& msg = plan.status().message();
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(msg.rfind(std::string(bad.path) + ": ", 0), 0u) << bad.name << ": " << msg;
  EXPECT_NE(msg.find(bad.says), std::string::npos) << bad.name << ": " << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << bad.name << ": " << msg;
}

INSTANTIATE_TEST_SUITE_P(Plans, BadPlanTest, ::testing::ValuesIn(kBadPlans),
                         [](const ::testing::TestParamInfo<BadPlan>& info) {
                           std::string n = info.param.name;
                           for (char& c : n) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

TEST(ValidatePlan, ChecksPlansBuiltInCode) {
  Plan plan = DefaultPlan("host");
  EXPECT_TRUE(ValidatePlan(plan).ok());
  plan.collectives[0].sizes = {4096, 1024};
  auto s = ValidatePlan(plan, {}, "", "spec.");
  EXPECT_EQ(s.message().rfind("spec.collectives[0].sizes[1]: ", 0), 0u) << s.message();
  plan = DefaultPlan("host");
  plan.collectives[0].choices = {"nccl"};
  s = ValidatePlan(plan, {}, "host");
  EXPECT_EQ(s.message().rfind("collectives[0].choices[0]: ", 0), 0u) << s.message();
  plan = DefaultPlan("host");
  plan.collectives[1].reduce_op = RedOp::kMax;  // allGather
  s = ValidatePlan(plan);
  EXPECT_EQ(s.message().rfind("collectives[1].reduceOp: ", 0), 0u) << s.message();
  plan = DefaultPlan("host");
  plan.benchmark.iters = 0;
  EXPECT_EQ(ValidatePlan(plan).message().rfind("benchmark.iters: ", 0), 0u);
}

}  // namespace
}  // namespace ccltune::core

// Unit tests of the controller's pure parts: work queue semantics, time formats, spec
// validation messages, the pod the builder makes, conditions, results summary, and the
// results API's epilogue queries (against a real redis-server).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "controller/cache/results_summary.h"
#include "controller/http/bind_address.h"
#include "controller/http/http_server.h"
#include "controller/http/results_api.h"
#include "controller/job/conditions.h"
#include "controller/job/job_spec.h"
#include "controller/kube/kube_config.h"
#include "controller/kube/time_util.h"
#include "controller/machinery/work_queue.h"
#include "controller/reconcile/pod_builder.h"
#include "core/redis/redis_client.h"
#include "core/results/result.h"
#include "core/results/result_store.h"
#include "tests/support/redis_server.h"

namespace ccltune::controller {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

TEST(WorkQueue, DeduplicatesAndNeverHandsOneKeyToTwoWorkers) {
  WorkQueue q;
  q.Add("ns/a");
  q.Add("ns/a");
  q.Add("ns/b");
  EXPECT_EQ(q.Len(), 2u);
  auto first = q.Get(10ms);
  ASSERT_TRUE(first);
  EXPECT_EQ(*first, "ns/a");
  q.Add("ns/a");  // re-added while processing: held back until Done
  auto second = q.Get(10ms);
  ASSERT_TRUE(second);
  EXPECT_EQ(*second, "ns/b");
  EXPECT_FALSE(q.Get(20ms));
  q.Done("ns/a");
  auto again = q.Get(10ms);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, "ns/a");
}

TEST(WorkQueue, RateLimitedRetriesBackOffExponentiallyAndForgetResets) {
  WorkQueue q(20ms, 1s);
  auto timed_get = [&] {
    auto t0 = std::chrono::steady_clock::now();
    auto k = q.Get(2s);
    EXPECT_TRUE(k);
    q.Done(*k);
    return std::chrono::steady_clock::now() - t0;
  };
  q.AddRateLimited("k");  // 20 ms
  EXPECT_GE(timed_get(), 18ms);
  q.AddRateLimited("k");  // 40 ms
  q.AddRateLimited("k");  // 80 ms (dedup: the first due one wins)
  EXPECT_GE(timed_get(), 35ms);
  q.Forget("k");
  q.AddRateLimited("k");
  EXPECT_LT(timed_get(), 60ms);
}

TEST(WorkQueue, AddAfterWaitsForTheDelay) {
  WorkQueue q;
  q.AddAfter("k", 100ms);
  EXPECT_FALSE(q.Get(30ms));
  EXPECT_TRUE(q.Get(500ms));
}

TEST(TimeUtil, RoundTripsMetaAndMicroTime) {
  auto t = Clock::from_time_t(1795000000) + 123456us;
  EXPECT_EQ(FormatTime(t), "2026-11-18T11:06:40Z");
  EXPECT_EQ(FormatMicroTime(t), "2026-11-18T11:06:40.123456Z");
  EXPECT_EQ(*ParseTime(FormatMicroTime(t)), t);
  EXPECT_EQ(*ParseTime("2026-11-18T12:06:40+01:00"), Clock::from_time_t(1795000000));
  EXPECT_FALSE(ParseTime("yesterday"));
}

Json ValidSpec() {
  return Json::parse(R"({"worldSize": 4, "gpusPerPod": 2, "backend": "host",
    "collectives": [{"op": "allReduce", "dtypes": ["fp32"], "reduceOp": "sum",
                     "sizes": {"min": "1KiB", "max": "4KiB", "factor": 2}}]})");
}

JobDefaults Defaults() { return {"img:1", "redis://r:6379/0", SecretKeyRef{"s", "pw"}}; }

TEST(JobSpec, ValidSpecTakesControllerDefaults) {
  auto s = ParseJobSpec(ValidSpec(), Defaults());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->pods(), 2);
  EXPECT_EQ(s->redis_url, "redis://r:6379/0");
  EXPECT_EQ(s->pod_template["image"], "img:1");
  ASSERT_TRUE(s->password_ref);
  EXPECT_EQ(s->password_ref->name, "s");
  EXPECT_EQ(s->backoff_limit, 2);
  EXPECT_EQ(s->plan.collectives[0].sizes.size(), 3u);
}

TEST(JobSpec, EachErrorNamesItsField) {
  struct Case {
    const char* patch;
    const char* field;
  };
  const Case cases[] = {
      {R"({"worldSize": 5})", "spec.worldSize"},
      {R"({"backend": "gloo"})", "spec.backend"},
      {R"({"replicas": 3})", "spec.replicas"},
      {R"({"template": {"hostIPC": "yes"}})", "spec.template.hostIPC"},
      {R"({"cache": {"redisURL": "redis://:pw@r:1/0"}})", "spec.cache.redisURL"},
      {R"({"cache": {"passwordSecretRef": {"name": "x"}}})", "spec.cache.passwordSecretRef"},
      {R"({"activeDeadlineSeconds": 0})", "spec.activeDeadlineSeconds"},
      {R"({"suspend": 1})", "spec.suspend"},
      {R"({"search": "greedy"})", "spec.search"},
      {R"({"emulatedNodes": 3})", "spec.emulatedNodes: 3 emulated nodes do not split 4 ranks"},
      {R"({"emulatedNodes": -1})", "spec.emulatedNodes"},
  };
  for (const Case& c : cases) {
    Json spec = ValidSpec();
    spec.merge_patch(Json::parse(c.patch));
    auto s = ParseJobSpec(spec, Defaults());
    ASSERT_FALSE(s.ok()) << c.patch;
    EXPECT_EQ(s.status().code(), core::StatusCode::kInvalidArgument);
    EXPECT_NE(s.status().message().find(c.field), std::string::npos) << s.status().message();
    EXPECT_EQ(s.status().message().find(":pw@"), std::string::npos);
  }
}

// spec.search reaches the pods: the plan ConfigMap they read carries it (adaptive when unset).
TEST(JobSpec, SearchGoesIntoThePodsPlan) {
  JobContext ctx;
  ctx.job = {{"metadata", {{"name", "j"}, {"namespace", "ns"}, {"uid", "u-1"}}}};
  ctx.spec = *ParseJobSpec(ValidSpec(), Defaults());
  EXPECT_EQ(ctx.spec.plan.search, core::Search::kAdaptive);
  Json spec = ValidSpec();
  spec["search"] = "exhaustive";
  ctx.spec = *ParseJobSpec(spec, Defaults());
  EXPECT_EQ(ctx.spec.plan.search, core::Search::kExhaustive);
  const Json cm = BuildPlanConfigMap(ctx);
  auto plan = core::ParsePlan(cm["data"].begin()->get<std::string>());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->search, core::Search::kExhaustive);
  spec["search"] = "Adaptive";  // names are exact, as every enum of the CRD
  auto bad = ParseJobSpec(spec, Defaults());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "spec.search: 'Adaptive' is not a known search (allowed: exhaustive, adaptive)");
}

Json EpilogueSpec() {
  return Json::parse(R"({"worldSize": 8, "gpusPerPod": 8, "backend": "nccl",
    "collectives": [{"op": "allReduce", "dtypes": ["bf16"], "reduceOp": "sum",
                     "epilogue": {"kind": "residualRmsNorm", "hidden": 4096, "eps": 1e-5},
                     "tokens": [1, 8, 32, 128, 512, 2048]}]})");
}

TEST(JobSpec, EpilogueEntryBecomesTokensOfHiddenRows) {
  auto s = ParseJobSpec(EpilogueSpec(), Defaults());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const auto& c = s->plan.collectives[0];
  EXPECT_EQ(c.epilogue.kind, core::EpilogueKind::kResidualRmsNorm);
  EXPECT_EQ(c.epilogue.hidden, 4096);
  EXPECT_DOUBLE_EQ(c.epilogue.eps, 1e-5);
  EXPECT_EQ(c.tokens, (std::vector<std::uint64_t>{1, 8, 32, 128, 512, 2048}));
  EXPECT_TRUE(c.sizes.empty());
  Json range = EpilogueSpec();
  range["collectives"][0]["tokens"] = {{"min", 1}, {"max", 2048}, {"factor", 4}};
  auto r = ParseJobSpec(range, Defaults());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->plan.collectives[0].tokens, (std::vector<std::uint64_t>{1, 4, 16, 64, 256, 1024}));
}

TEST(JobSpec, EpilogueErrorsNameTheirField) {
  struct Case {
    const char* patch;  // merged into collectives[0]
    const char* field;
  };
  const Case cases[] = {
      {R"({"epilogue": {"kind": "gelu", "hidden": 4096}})", "spec.collectives[0].epilogue.kind"},
      {R"({"epilogue": {"kind": "bias", "hidden": 4095, "eps": null}})",
       "spec.collectives[0].epilogue.hidden"},
      {R"({"epilogue": {"kind": "residualRmsNorm", "hidden": 4096, "eps": 0}})",
       "spec.collectives[0].epilogue.eps"},
      {R"({"tokens": [0, 8]})", "spec.collectives[0].tokens"},
      {R"({"tokens": [70000]})", "spec.collectives[0].tokens"},
      {R"({"sizes": [4096]})", "spec.collectives[0].sizes"},
      {R"({"dtypes": ["int32"]})", "spec.collectives[0].dtypes"},
      {R"({"op": "allGather", "reduceOp": null})", "spec.collectives[0].epilogue"},
      {R"({"epilogue": null})", "spec.collectives[0].tokens"},  // tokens without an epilogue
  };
  for (const Case& c : cases) {
    Json spec = EpilogueSpec();
    spec["collectives"][0].merge_patch(Json::parse(c.patch));
    auto s = ParseJobSpec(spec, Defaults());
    ASSERT_FALSE(s.ok()) << c.patch;
    EXPECT_EQ(s.status().code(), core::StatusCode::kInvalidArgument) << c.patch;
    EXPECT_NE(s.status().message().find(c.field), std::string::npos)
        << c.patch << " -> " << s.status().message();
  }
  Json host = EpilogueSpec();
  host["backend"] = "host";
  auto s = ParseJobSpec(host, Defaults());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("spec.collectives[0].epilogue"), std::string::npos)
      << s.status().message();
}

TEST(PodBuilder, PodCarriesTheEnvContractOwnerAndGangLabels) {
  JobContext ctx;
  ctx.job = {{"metadata", {{"name", "j"}, {"namespace", "ns"}, {"uid", "u-1"}}}};
  ctx.spec = *ParseJobSpec(ValidSpec(), Defaults());
  ctx.spec.pod_template["schedulerName"] = "volcano";
  Json pod = BuildPod(ctx, "/bin/ccltune", 3, 1);
  EXPECT_EQ(pod["metadata"]["name"], "j-a3-1");
  EXPECT_EQ(pod["metadata"]["labels"]["ccltune.io/attempt"], "3");
  EXPECT_EQ(pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"], "j-a3");
  EXPECT_EQ(pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"], "j-a3");
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["uid"], "u-1");
  EXPECT_EQ(pod["spec"]["restartPolicy"], "Never");
  EXPECT_EQ(pod["spec"]["schedulerName"], "volcano");
  const Json& c = pod["spec"]["containers"][0];
  EXPECT_EQ(c["command"], Json::array({"/bin/ccltune", "worker"}));
  // The rank's own fatal line reaches the job's Failed condition (issue 44).
  EXPECT_EQ(c["terminationMessagePolicy"], "FallbackToLogsOnError");
  std::map<std::string, Json> env;
  for (const Json& e : c["env"]) env[e["name"]] = e;
  EXPECT_EQ(env["CCLTUNE_JOB_ID"]["value"], "u-1");
  EXPECT_EQ(env["CCLTUNE_ATTEMPT"]["value"], "3");
  EXPECT_EQ(env["CCLTUNE_POD_INDEX"]["value"], "1");
  EXPECT_EQ(env["CCLTUNE_RANKS_PER_POD"]["value"], "2");
  EXPECT_EQ(env["CCLTUNE_PLAN_FILE"]["value"], "/etc/ccltune/plan/plan.json");
  EXPECT_EQ(env["CCLTUNE_REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"]["name"], "s");
  EXPECT_FALSE(env["CCLTUNE_REDIS_PASSWORD"].contains("value"));
  // One /metrics port per rank of the pod, named as the chart's PodMonitor scrapes them.
  EXPECT_EQ(env["CCLTUNE_METRICS_PORT"]["value"], "9400");
  ASSERT_EQ(c["ports"].size(), 2u);
  EXPECT_EQ(c["ports"][0]["name"], "metrics");
  EXPECT_EQ(c["ports"][0]["containerPort"], 9400);
  EXPECT_EQ(c["ports"][1]["name"], "metrics-1");
  EXPECT_EQ(c["ports"][1]["containerPort"], 9401);
  // The rank's node from the downward API (docs/design.md §6), never a value the controller
  // guesses.
  EXPECT_EQ(env["CCLTUNE_NODE_NAME"], Json::parse(R"({"name": "CCLTUNE_NODE_NAME",
                            "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}})"));
}

// NCCL's variables are the user's and the node's: an nccl worker pod sets none of them, so an
// unset NCCL_NVLS_ENABLE stays unset and one the image or node sets reaches NCCL unchanged.
TEST(PodBuilder, NcclPodLeavesNcclMulticastVariablesAlone) {
  JobContext ctx;
  ctx.job = {{"metadata", {{"name", "j"}, {"namespace", "ns"}, {"uid", "u-1"}}}};
  ctx.spec = *ParseJobSpec(EpilogueSpec(), Defaults());
  ASSERT_EQ(ctx.spec.backend, "nccl");
  Json pod = BuildPod(ctx, "/bin/ccltune", 0, 0);
  for (const Json& e : pod["spec"]["containers"][0]["env"]) {
    const std::string name = e["name"];
    EXPECT_NE(name, "NCCL_NVLS_ENABLE");
    EXPECT_NE(name, "TORCH_SYMM_MEM_DISABLE_MULTICAST");
    EXPECT_NE(name, "NVSHMEM_DISABLE_NVLS");
  }
}

// spec.emulatedNodes reaches the pods' plan (and stays out of it when unset).
TEST(JobSpec, EmulatedNodesGoIntoThePodsPlan) {
  JobContext ctx;
  ctx.job = {{"metadata", {{"name", "j"}, {"namespace", "ns"}, {"uid", "u-1"}}}};
  Json spec = ValidSpec();
  spec["emulatedNodes"] = 2;
  ctx.spec = *ParseJobSpec(spec, Defaults());
  auto plan = core::ParsePlan(BuildPlanConfigMap(ctx)["data"].begin()->get<std::string>());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->emulated_nodes, 2);
  ctx.spec = *ParseJobSpec(ValidSpec(), Defaults());
  EXPECT_EQ(BuildPlanConfigMap(ctx)["data"].begin()->get<std::string>().find("emulatedNodes"),
            std::string::npos);
}

TEST(Conditions, TransitionTimeMovesOnlyWhenStatusFlips) {
  Json status = Json::object();
  auto t0 = Clock::from_time_t(1795000000);
  SetCondition(status, "Complete", false, "Running", "m", 1, t0);
  SetCondition(status, "Complete", false, "Running", "m2", 2, t0 + 5s);
  EXPECT_EQ((*FindCondition(status, "Complete"))["lastTransitionTime"], FormatTime(t0));
  EXPECT_EQ((*FindCondition(status, "Complete"))["observedGeneration"], 2);
  SetCondition(status, "Complete", true, "Done", "m3", 2, t0 + 9s);
  EXPECT_EQ((*FindCondition(status, "Complete"))["lastTransitionTime"], FormatTime(t0 + 9s));
}

TEST(ResultsSummary, WinnersAreCappedAndGeomeanComputed) {
  Json records = Json::array();
  for (int i = 0; i < 70; ++i) {
    records.push_back({{"schema", 1},
                       {"fingerprint", "fp"},
                       {"op", "allReduce"},
                       {"dtype", "fp32"},
                       {"redop", "sum"},
                       {"bytes", 1024 * (i + 1)},
                       {"winner", "ring"},
                       {"winnerParams", Json::object()},
                       {"timeUs", 2.0},
                       {"defaultTimeUs", 4.0},
                       {"speedupVsDefault", i % 2 ? 4.0 : 1.0},
                       {"busbwGBs", 1.0},
                       {"choices", Json::array({{{"name", "ring"},
                                                 {"params", Json::object()},
                                                 {"timeUs", 2.0},
                                                 {"minUs", 1.0},
                                                 {"maxUs", 3.0},
                                                 {"busbwGBs", 1.0},
                                                 {"status", "ok"}}})},
                       {"worldSize", 4},
                       {"tunedAt", "2026-11-22T08:00:00Z"},
                       {"jobId", "u"},
                       {"attempt", 0},
                       {"toolVersion", "0.1.0"}});
  }
  Json summary = {{"fingerprint", "fp"},
                  {"presync", {{"waitMs", 3.5}, {"skewMs", 1.0}}},
                  {"problems", 70},
                  {"published", 70},
                  {"records", records}};
  Json status = Json::object();
  core::Status filled = FillResults(status, summary);
  ASSERT_TRUE(filled.ok()) << filled.ToString();
  EXPECT_EQ(status["results"]["winners"].size(), kMaxWinners);
  EXPECT_NEAR(status["results"]["speedupGeomean"].get<double>(), 2.0, 1e-9);
  EXPECT_EQ(status["preSync"]["waitMs"], 3.5);
  summary["records"][3].erase("schema");
  EXPECT_EQ(FillResults(status, summary).code(), core::StatusCode::kDataLoss);
}

// The node count the workers grouped their ranks into (the fingerprint's) and NCCL's own
// account of what it formed reach the status; a summary without them adds nothing.
TEST(ResultsSummary, NodesAndNcclTopologyComeFromTheSummary) {
  Json summary = {
      {"fingerprint", "fp"},
      {"records", Json::array()},
      {"fingerprintInfo", {{"nodes", 2}, {"gpusPerNode", 4}}},
      {"ncclTopology", {{"nNodes", {2}}, {"intraNode", {"P2P"}}, {"interNode", {"NET/Socket"}}}}};
  Json status = Json::object();
  ASSERT_TRUE(FillResults(status, summary).ok());
  EXPECT_EQ(status["results"]["nodes"], 2);
  EXPECT_EQ(status["results"]["gpusPerNode"], 4);
  EXPECT_EQ(status["results"]["ncclTopology"],
            "NCCL formed 2 node(s); P2P inside nodes; NET/Socket between them");
  summary["ncclTopology"] = {{"problem", "rank 1: NCCL_DEBUG=WARN was set by the user"}};
  ASSERT_TRUE(FillResults(status, summary).ok());
  EXPECT_EQ(status["results"]["ncclTopology"],
            "unknown: rank 1: NCCL_DEBUG=WARN was set by the user");
  Json plain = {{"fingerprint", "fp"}, {"records", Json::array()}};
  ASSERT_TRUE(FillResults(status, plain).ok());
  EXPECT_FALSE(status["results"].contains("nodes"));
  EXPECT_FALSE(status["results"].contains("ncclTopology"));
}

core::ResultRecord Record(std::uint64_t bytes, const std::string& winner,
                          const core::Epilogue& epilogue = {}) {
  core::ResultRecord r;
  r.fingerprint = "fp0123456789abcd";
  r.op = core::Op::kAllReduce;
  r.dtype = core::Dtype::kBf16;
  r.redop = core::RedOp::kSum;
  r.bytes = bytes;
  r.epilogue = epilogue;
  r.winner = winner;
  r.time_us = 10;
  r.default_time_us = 15;
  r.speedup_vs_default = 1.5;
  core::ChoiceResult c;
  c.name = winner;
  c.time_us = 10;
  c.min_us = 9;
  c.max_us = 11;
  r.choices = {c};
  r.world_size = 4;
  r.tuned_at = "2026-11-22T08:00:00Z";
  r.job_id = "job";
  r.tool_version = "0.1.0";
  return r;
}

core::Epilogue RmsNorm(int hidden) {
  core::Epilogue e;
  e.kind = core::EpilogueKind::kResidualRmsNorm;
  e.hidden = hidden;
  return e;
}

// The status carries the tune table's precision (speedups 3.91x, times 405.76 us), never a
// double's 16 digits: `kubectl get ctj` prints the geomean as it is.
TEST(ResultsSummary, FiguresAreRoundedForPeople) {
  core::ResultRecord a = Record(1024, "ring");
  a.time_us = 405.76123456789;
  a.default_time_us = 1585.79;
  a.speedup_vs_default = a.default_time_us / a.time_us;  // 3.908222...
  core::ResultRecord b = Record(2048, "ring");
  b.speedup_vs_default = 1.4631415;
  Json summary = {{"fingerprint", "fp"},
                  {"records", Json::array({core::ToJson(a), core::ToJson(b)})}};
  Json status = Json::object();
  ASSERT_TRUE(FillResults(status, summary).ok());
  const Json& results = status["results"];
  EXPECT_EQ(results["winners"][0]["timeUs"].dump(), "405.76");
  EXPECT_EQ(results["winners"][0]["speedup"].dump(), "3.91");
  EXPECT_EQ(results["winners"][1]["speedup"].dump(), "1.46");
  EXPECT_EQ(results["speedupGeomean"].dump(), "2.39");  // sqrt(3.9082 * 1.4631)
}

TEST(ResultsSummary, EpilogueWinnersCarryTheirLabelPlainOnesNoField) {
  Json summary = {
      {"fingerprint", "fp"},
      {"records",
       Json::array({core::ToJson(Record(8192, "nccl")),
                    core::ToJson(Record(8192, "oneshot-fused:blocks=32,mode=pull,threads=512",
                                        RmsNorm(4096)))})}};
  Json status = Json::object();
  core::Status filled = FillResults(status, summary);
  ASSERT_TRUE(filled.ok()) << filled.ToString();
  const Json& winners = status["results"]["winners"];
  ASSERT_EQ(winners.size(), 2u);
  EXPECT_FALSE(winners[0].contains("epilogue")) << winners[0];
  EXPECT_EQ(winners[1]["epilogue"], "residualRmsNorm,hidden=4096");
  EXPECT_EQ(winners[1]["bytes"], 8192);
}

// The results API against a real redis-server holding a plain and a fused record of the
// same (op, dtype, bytes): the epilogue parameter picks which one answers.
class ResultsApiEpilogueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = testing::RedisServer::Start();
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(s).value();
    auto c = core::RedisClient::Connect(server_->endpoint());
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    core::ResultStore store(**c);
    ASSERT_TRUE(
        store
            .Publish(kFp, "{}",
                     {Record(8192, "nccl"), Record(65536, "rs+ag"),
                      Record(8192, "oneshot-fused:blocks=32,mode=pull,threads=512", RmsNorm(4096)),
                      Record(2048 * 8192, "twoshot-fused:blocks=32,mode=pull,threads=512",
                             RmsNorm(4096))})
            .ok());
    api_ = std::make_unique<ResultsApi>(server_->url(), "");
  }

  HttpResponse Get(const std::string& target) {
    const std::size_t q = target.find('?');
    HttpRequest req{"GET", target.substr(0, q), {}};
    if (q != std::string::npos) {
      auto query = ParseQueryString(target.substr(q + 1));
      EXPECT_TRUE(query.ok()) << target;
      if (query.ok()) req.query = *query;
    }
    return api_->Handle(req);
  }

  static constexpr const char* kFp = "fp0123456789abcd";
  std::unique_ptr<testing::RedisServer> server_;
  std::unique_ptr<ResultsApi> api_;
};

TEST_F(ResultsApiEpilogueTest, PointLookupWithAndWithoutEpilogue) {
  const std::string point =
      std::string("/api/v1/results?fingerprint=") + kFp + "&op=allReduce&dtype=bf16&bytes=8192";
  HttpResponse plain = Get(point);
  ASSERT_EQ(plain.code, 200) << plain.body;
  Json p = Json::parse(plain.body);
  EXPECT_EQ(p["winner"], "nccl");
  EXPECT_FALSE(p.contains("epilogue")) << p;

  HttpResponse fused = Get(point + "&epilogue=residualRmsNorm%2Chidden%3D4096");
  ASSERT_EQ(fused.code, 200) << fused.body;
  Json f = Json::parse(fused.body);
  EXPECT_EQ(f["winner"], "oneshot-fused:blocks=32,mode=pull,threads=512");
  EXPECT_EQ(f["epilogue"]["kind"], "residualRmsNorm");
  EXPECT_EQ(f["epilogue"]["hidden"], 4096);
  // The nearest tuned bucket among the fused records only (the plain 64 KiB is not one).
  Json near = Json::parse(Get(std::string("/api/v1/results?fingerprint=") + kFp +
                              "&op=allReduce&dtype=bf16&bytes=1MiB&epilogue=residualRmsNorm,"
                              "hidden=4096")
                              .body);
  EXPECT_EQ(near["winner"], "twoshot-fused:blocks=32,mode=pull,threads=512") << near;
  // "none" is the plain collective; another hidden size was never tuned.
  EXPECT_EQ(Json::parse(Get(point + "&epilogue=none").body)["winner"], "nccl");
  EXPECT_EQ(Get(point + "&epilogue=residualRmsNorm,hidden=8192").code, 404);
}

TEST_F(ResultsApiEpilogueTest, BadEpilogueIs400NamingTheParameterAndTheForm) {
  const std::string point =
      std::string("/api/v1/results?fingerprint=") + kFp + "&op=allReduce&dtype=bf16&bytes=8192";
  for (const char* bad : {"gelu,hidden=4096", "residualRmsNorm", "residualRmsNorm,hidden=4095",
                          "residualRmsNorm,hidden=big"}) {
    HttpResponse r = Get(point + "&epilogue=" + bad);
    EXPECT_EQ(r.code, 400) << bad << ": " << r.body;
    const std::string error = Json::parse(r.body)["error"];
    EXPECT_EQ(error.rfind("epilogue: ", 0), 0u) << error;
    EXPECT_NE(error.find("epilogue=residualRmsNorm,hidden=4096"), std::string::npos) << error;
  }
  EXPECT_EQ(Get(std::string("/api/v1/results?fingerprint=") + kFp + "&epilogue=x").code, 400);
}

TEST_F(ResultsApiEpilogueTest, ListingCarriesTheFieldAndFiltersByEpilogue) {
  const std::string list = std::string("/api/v1/results?fingerprint=") + kFp;
  Json all = Json::parse(Get(list).body)["results"];
  ASSERT_EQ(all.size(), 4u) << all;
  int fused = 0;
  for (const Json& r : all) fused += r.contains("epilogue");
  EXPECT_EQ(fused, 2);
  Json only = Json::parse(Get(list + "&epilogue=residualRmsNorm,hidden=4096").body)["results"];
  ASSERT_EQ(only.size(), 2u) << only;
  for (const Json& r : only) EXPECT_EQ(r["epilogue"]["hidden"], 4096);
  Json plain = Json::parse(Get(list + "&epilogue=none").body)["results"];
  ASSERT_EQ(plain.size(), 2u) << plain;
  for (const Json& r : plain) EXPECT_FALSE(r.contains("epilogue"));
}

TEST(TokenSource, RereadsTheTokenFileWhenItChanges) {
  char dir[] = "/tmp/ccltune-token-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/token";
  std::ofstream(path) << "first\n";
  KubeConfig cfg;
  cfg.token_file = path;
  TokenSource tokens(cfg);
  EXPECT_EQ(tokens.Token(), "first");
  std::this_thread::sleep_for(20ms);  // a rotation is a new file: new mtime
  std::ofstream(path + ".new") << "second";
  ASSERT_EQ(std::rename((path + ".new").c_str(), path.c_str()), 0);
  EXPECT_EQ(tokens.Token(), "second");
  unlink(path.c_str());
  EXPECT_EQ(tokens.Token(), "second");  // a missing file keeps the last good token
  rmdir(dir);
}

TEST(BindAddress, HostPortFormsAsControllerRuntimeSpellsThem) {
  auto all = ParseBindAddress("--flag", ":8081");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->host, "");
  EXPECT_EQ(all->port, 8081);
  EXPECT_EQ(all->ListeningPorts(), "8081");
  auto loopback = ParseBindAddress("--flag", "127.0.0.1:0");
  ASSERT_TRUE(loopback.ok()) << loopback.status().ToString();
  EXPECT_EQ(loopback->ListeningPorts(), "127.0.0.1:0");
  EXPECT_TRUE(ParseBindAddress("--flag", "0.0.0.0:65535").ok());
}

TEST(BindAddress, EachBadFormIsOneErrorNamingTheFlagAndTheForm) {
  for (const char* bad : {"8081", ":", ":http", ":65536", ":123456", ":-1", "localhost:8081",
                          "[::1]:8081", "1.2.3:80", "127.0.0.1:80x", ""}) {
    auto r = ParseBindAddress("--health-probe-bind-address", bad);
    ASSERT_EQ(r.status().code(), core::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(r.status().message().find("--health-probe-bind-address: '" + std::string(bad) + "'"),
              std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find("[HOST]:PORT"), std::string::npos) << bad;
  }
}

TEST(HttpServer, MalformedPercentEscapesAreRejectedNotThrown) {
  auto ok = ParseQueryString("fingerprint=ab%2Dc&op=all+Reduce");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ((*ok)["fingerprint"], "ab-c");
  EXPECT_EQ((*ok)["op"], "all Reduce");
  for (const char* bad : {"%zz=1", "x=%4", "x=%", "x=%G1"}) {
    auto query = ParseQueryString(bad);
    EXPECT_EQ(query.status().code(), core::StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace ccltune::controller

// Unit tests of the controller's pure parts: work queue semantics, time formats, spec
// validation messages, the pod the builder makes, conditions and results summary.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "controller/conditions.h"
#include "controller/http_server.h"
#include "controller/job_spec.h"
#include "controller/kube_config.h"
#include "controller/pod_builder.h"
#include "controller/results_summary.h"
#include "controller/time_util.h"
#include "controller/work_queue.h"

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

TEST(HttpServer, MalformedPercentEscapesAreRejectedNotThrown) {
  HttpRequest ok;
  ASSERT_TRUE(
      ParseRequestLine("GET /api/v1/results?fingerprint=ab%2Dc&op=all+Reduce HTTP/1.1", &ok));
  EXPECT_EQ(ok.path, "/api/v1/results");
  EXPECT_EQ(ok.query["fingerprint"], "ab-c");
  EXPECT_EQ(ok.query["op"], "all Reduce");
  for (const char* bad : {"GET /a?%zz=1 HTTP/1.1", "GET /a?x=%4 HTTP/1.1", "GET /a?x=% HTTP/1.1",
                          "GET /a?x=%G1 HTTP/1.1"}) {
    HttpRequest req;
    EXPECT_FALSE(ParseRequestLine(bad, &req)) << bad;
  }
}

}  // namespace
}  // namespace ccltune::controller

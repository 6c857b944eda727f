// Unit tests of where tuning pods' metrics go (docs/design.md §6 spec.metrics, the controller's
// --pushgateway-url and --metrics-linger): the URL rule, defaults and the job's override, each
// error naming its field, and what the pod builder gives the worker. The Pushgateway itself,
// pushes and the cleanup on delete: test_controller_metrics.py, against real processes.
#include <gtest/gtest.h>

#include <map>

#include "controller/job/job_spec.h"
#include "controller/job/pushgateway_url.h"
#include "controller/reconcile/pod_builder.h"

namespace ccltune::controller {
namespace {

using Json = nlohmann::json;

Json Spec(const char* metrics = nullptr) {
  Json spec = Json::parse(R"({"worldSize": 2, "gpusPerPod": 1, "backend": "host",
    "collectives": [{"op": "allReduce", "dtypes": ["fp32"], "reduceOp": "sum", "sizes": [1024]}]})");
  if (metrics) spec["metrics"] = Json::parse(metrics);
  return spec;
}

JobDefaults Defaults(std::string pushgateway = "", int linger = 0) {
  return {"img:1", "redis://r:6379/0", std::nullopt, std::move(pushgateway), linger};
}

TEST(PushgatewayUrl, BaseUrlsPassAndEveryOtherFormIsOneErrorNamingTheField) {
  for (const char* ok : {"http://pgw:9091", "https://pgw.monitoring.svc:9091/", "http://10.0.0.7",
                         "http://[fd00::1]:9091/gw/v1", "http://pushgateway"}) {
    EXPECT_TRUE(CheckPushgatewayUrl(ok, "f").ok()) << ok;
  }
  const std::string form = "http[s]://host[:port][/path]", ports = "outside [1, 65535]";
  auto expect_refused = [](const std::string& url, const std::string& allowed) {
    core::Status st = CheckPushgatewayUrl(url, "spec.metrics.pushgateway");
    ASSERT_FALSE(st.ok()) << url;
    EXPECT_EQ(st.code(), core::StatusCode::kInvalidArgument);
    EXPECT_EQ(st.message().rfind("spec.metrics.pushgateway: ", 0), 0u) << st.message();
    EXPECT_NE(st.message().find(allowed), std::string::npos) << st.message();
  };
  for (const char* bad :
       {"ftp://pgw:9091", "pgw:9091", "http://", "http://:9091", "http://pgw:9091/a?b=c",
        "http://pgw:9091/#x", "http://-pgw", "http://pg w"}) {
    expect_refused(bad, form);
  }
  expect_refused("http://pgw:0", ports);
  expect_refused("http://pgw:65536", ports);
  // A password in the URL is refused without being repeated.
  core::Status st = CheckPushgatewayUrl("http://u:s3cret@pgw:9091", "--pushgateway-url");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("credentials"), std::string::npos) << st.message();
  EXPECT_EQ(st.message().find("s3cret"), std::string::npos) << st.message();
  EXPECT_FALSE(CheckPushgatewayUrl("http://pgw/" + std::string(3000, 'a'), "f").ok());
  EXPECT_EQ(PushgatewayBase("http://pgw:9091/gw//"), "http://pgw:9091/gw");
}

TEST(JobSpecMetrics, ControllerDefaultsApplyAndTheJobOverridesThem) {
  auto plain = ParseJobSpec(Spec(), Defaults("http://pgw:9091", 20));
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->pushgateway, "http://pgw:9091");
  EXPECT_EQ(plain->metrics_linger_seconds, 20);
  auto own = ParseJobSpec(Spec(R"({"pushgateway": "https://team-pgw:443/gw", "lingerSeconds": 0})"),
                          Defaults("http://pgw:9091", 20));
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_EQ(own->pushgateway, "https://team-pgw:443/gw");
  EXPECT_EQ(own->metrics_linger_seconds, 0);
  // An empty URL turns the controller's Pushgateway off for this job.
  auto off = ParseJobSpec(Spec(R"({"pushgateway": ""})"), Defaults("http://pgw:9091"));
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_EQ(off->pushgateway, "");
  auto none = ParseJobSpec(Spec(), Defaults());
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->pushgateway, "");
  EXPECT_EQ(none->metrics_linger_seconds, 0);
}

TEST(JobSpecMetrics, EachErrorNamesItsFieldAndWhatIsAllowed) {
  const std::map<std::string, std::string> cases = {
      {R"({"pushgateway": "pgw:9091"})", "spec.metrics.pushgateway: 'pgw:9091' is not http"},
      {R"({"pushgateway": 9091})", "spec.metrics.pushgateway: must be a string"},
      {R"({"pushgateway": "http://a:pw@pgw"})",
       "spec.metrics.pushgateway: must not hold credentials"},
      {R"({"lingerSeconds": 601})", "spec.metrics.lingerSeconds: 601 is outside [0, 600]"},
      {R"({"lingerSeconds": -1})", "spec.metrics.lingerSeconds: -1 is outside [0, 600]"},
      {R"({"lingerSeconds": 1.5})", "spec.metrics.lingerSeconds: must be an integer"},
      {R"({"interval": 15})", "spec.metrics.interval: unknown field"},
      {R"("http://pgw")", "spec.metrics: must be an object"},
  };
  for (const auto& [metrics, message] : cases) {
    auto s = ParseJobSpec(Spec(metrics.c_str()), Defaults());
    ASSERT_FALSE(s.ok()) << metrics;
    EXPECT_EQ(s.status().code(), core::StatusCode::kInvalidArgument);
    EXPECT_NE(s.status().message().find(message), std::string::npos) << s.status().message();
    EXPECT_EQ(s.status().message().find(":pw@"), std::string::npos) << s.status().message();
  }
}

std::map<std::string, Json> EnvOf(const Json& pod) {
  std::map<std::string, Json> env;
  for (const Json& e : pod["spec"]["containers"][0]["env"]) env[e["name"]] = e;
  return env;
}

TEST(PodBuilderMetrics, WorkerGetsThePushgatewayAndTheLingerOnlyWhenSet) {
  JobContext ctx;
  ctx.job = {{"metadata", {{"name", "j"}, {"namespace", "ns"}, {"uid", "u-1"}}}};
  ctx.spec = *ParseJobSpec(Spec(R"({"lingerSeconds": 20})"), Defaults("http://pgw:9091"));
  Json pod = BuildPod(ctx, "ccltune", 0, 0);
  EXPECT_EQ(EnvOf(pod)["CCLTUNE_PUSHGATEWAY"]["value"], "http://pgw:9091");
  EXPECT_EQ(pod["spec"]["containers"][0]["args"], Json::array({"--metrics-linger", "20"}));
  ctx.spec = *ParseJobSpec(Spec(), Defaults());
  ctx.spec.publish = false;
  pod = BuildPod(ctx, "ccltune", 0, 0);
  EXPECT_EQ(EnvOf(pod).count("CCLTUNE_PUSHGATEWAY"), 0u);
  EXPECT_EQ(pod["spec"]["containers"][0]["args"], Json::array({"--no-publish"}));
}

}  // namespace
}  // namespace ccltune::controller

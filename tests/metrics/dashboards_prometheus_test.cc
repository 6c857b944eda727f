// The dashboards against real data: a real `prometheus` scrapes the workers of a tuning run
// (and the controller's /metrics) and a real Pushgateway that received the workers' final
// pushes; then every panel query of dashboards/*.json, with its template variables filled
// from label_values() through the Prometheus API, must return at least one finite series.
// Also a static check of the dashboards: units on every panel, datasource variable, variables.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

#include "tests/metrics/child_process.h"
#include "tests/metrics/prom_servers.h"
#include "tests/metrics/synthetic_run.h"
#include "worker/metrics/metrics_server.h"
#include "worker/metrics/pushgateway_client.h"
#ifdef CCLTUNE_TEST_HAVE_CONTROLLER
#include "controller/metrics.h"
#endif

namespace ccltune::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr char kNamespace[] = "ccltune-test";  // what Kubernetes SD would attach to workers
const char* const kDashboards[] = {"ccltune-overview", "ccltune-results"};

std::string SourceDir() {
  const char* dir = std::getenv("CCLTUNE_SOURCE_DIR");
  return dir ? dir : CCLTUNE_TEST_SOURCE_DIR;
}

json LoadDashboard(const std::string& name) {
  std::ifstream in(SourceDir() + "/dashboards/" + name + ".json");
  return json::parse(in);  // throws (test failure) on a missing or broken file
}

// ---------------------------------------------------------------------------------------
// The tuning run that Prometheus watches. This is the one function to swap for a real run
// (`ccltune tune --ranks 2 --backend host --metrics-port P --pushgateway URL`, kept alive
// until scraped): today it is WorkerMetrics of two ranks in this process, fed with a complete
// synthetic event sequence (FeedSyntheticRun), each rank served by its own MetricsServer and
// pushed to the Pushgateway at the end, as `ccltune worker` does.
class ObservedRun {
 public:
  std::vector<int> metrics_ports;
  std::string job_id = "ctj-uid-7f3e";

  static core::Result<std::unique_ptr<ObservedRun>> Start(const std::string& pushgateway_url) {
    auto run = std::make_unique<ObservedRun>();
    for (int rank = 0; rank < 2; ++rank) {
      auto& registry = *run->registries_.emplace_back(std::make_unique<core::Registry>());
      CCLTUNE_ASSIGN_OR_RETURN(auto metrics,
                               worker::WorkerMetrics::Create(registry, {run->job_id, rank}));
      FeedSyntheticRun(*metrics, rank);
      CCLTUNE_ASSIGN_OR_RETURN(auto server,
                               worker::MetricsServer::Start(registry, {"127.0.0.1", 0, 5, 8192}));
      run->metrics_ports.push_back(server->port());
      CCLTUNE_RETURN_IF_ERROR(worker::PushgatewayClient::Push(pushgateway_url, run->job_id, rank,
                                                              registry, worker::DeadlineIn(10)));
      run->metrics_.push_back(std::move(metrics));
      run->servers_.push_back(std::move(server));
    }
    return run;
  }

 private:
  std::vector<std::unique_ptr<core::Registry>> registries_;
  std::vector<std::unique_ptr<worker::WorkerMetrics>> metrics_;
  std::vector<std::unique_ptr<worker::MetricsServer>> servers_;
};

// The controller's /metrics, for the panels over controller metrics (ccltune_jobs).
class ControllerExposition {
 public:
  core::Result<int> Start() {
#ifdef CCLTUNE_TEST_HAVE_CONTROLLER
    std::fprintf(stderr,
                 "controller panels: real ControllerMetrics families "
                 "(controller/metrics.cc), phase counts set by this test; no running "
                 "controller\n");
    metrics_.SetJobsByPhase({{"Running", 1}, {"Succeeded", 3}});
    auto render = [this] { return metrics_.Text(); };
#else
    std::fprintf(stderr,
                 "controller panels: STAND-IN exposition of ccltune_jobs{phase} "
                 "(ccltune-controller is not built); replace with the real controller\n");
    auto jobs = registry_.AddGauge({"ccltune_jobs", "Jobs by phase (stand-in)", {"phase"}});
    if (!jobs.ok()) return jobs.status();
    (*jobs)->WithLabels({"Running"}).Set(1);
    (*jobs)->WithLabels({"Succeeded"}).Set(3);
    auto render = [this] { return core::SerializeText(registry_); };
#endif
    CCLTUNE_ASSIGN_OR_RETURN(server_,
                             worker::MetricsServer::Start(render, {"127.0.0.1", 0, 5, 8192}));
    return server_->port();
  }

 private:
#ifdef CCLTUNE_TEST_HAVE_CONTROLLER
  controller::ControllerMetrics metrics_;
#else
  core::Registry registry_;
#endif
  std::unique_ptr<worker::MetricsServer> server_;
};
// ---------------------------------------------------------------------------------------

// The scrape configuration the dashboards assume (also in the README): workers scraped
// directly with a `namespace` target label (Kubernetes SD/PodMonitor adds it), the Pushgateway
// with honor_labels so pushed `job="ccltune"`, `ccltune_job` and `rank` survive.
std::string PrometheusConfig(const std::vector<int>& workers, int pushgateway, int controller) {
  std::string targets;
  for (int p : workers)
    targets +=
        (targets.empty() ? "'" : ", '") + std::string("127.0.0.1:") + std::to_string(p) + "'";
  return "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
         "scrape_configs:\n"
         "- job_name: ccltune-worker\n"
         "  static_configs: [{targets: [" +
         targets + "], labels: {namespace: " + kNamespace +
         "}}]\n"
         "- job_name: pushgateway\n"
         "  honor_labels: true\n"
         "  static_configs: [{targets: ['127.0.0.1:" +
         std::to_string(pushgateway) +
         "']}]\n"
         "- job_name: ccltune-controller\n"
         "  static_configs: [{targets: ['127.0.0.1:" +
         std::to_string(controller) + "']}]\n";
}

core::Result<json> PromApi(int port, const std::string& path_and_query) {
  CCLTUNE_ASSIGN_OR_RETURN(HttpAnswer answer, HttpGet(port, path_and_query, 10s));
  json body = json::parse(answer.body, nullptr, false);
  if (answer.code != 200 || body.is_discarded() || body.value("status", "") != "success")
    return core::Internal("prometheus " + path_and_query + " → " + std::to_string(answer.code) +
                          ": " + answer.body.substr(0, 500));
  return body["data"];
}

core::Result<json> Query(int port, const std::string& expr) {
  return PromApi(port, "/api/v1/query?query=" + UrlEncode(expr));
}

// Waits until both paths delivered: direct scrapes (job ccltune-worker) and the pushes (job
// ccltune, kept by honor_labels), and the controller's ccltune_jobs.
core::Status WaitForData(int prom_port) {
  const std::string probe =
      "count by (job) (ccltune_tuning_duration_seconds) or count by (job) (ccltune_jobs)";
  auto deadline = std::chrono::steady_clock::now() + 60s;
  std::string seen;
  while (std::chrono::steady_clock::now() < deadline) {
    auto data = Query(prom_port, probe);
    std::set<std::string> jobs;
    if (data.ok())
      for (const auto& s : (*data)["result"]) jobs.insert(s["metric"].value("job", ""));
    if (jobs == std::set<std::string>{"ccltune-worker", "ccltune", "ccltune-controller"})
      return core::Status::Ok();
    seen = data.ok() ? data->dump() : data.status().ToString();
    std::this_thread::sleep_for(500ms);
  }
  return core::TimeoutError("Prometheus did not scrape every target within 60 s: " + seen);
}

std::vector<json> AllPanels(const json& dashboard) {
  std::vector<json> out;
  for (const auto& p : dashboard.value("panels", json::array())) {
    out.push_back(p);
    for (const auto& inner : p.value("panels", json::array())) out.push_back(inner);  // rows
  }
  return out;
}

std::string Substitute(std::string text, const std::map<std::string, std::string>& values) {
  for (const auto& [name, value] : values) {
    for (const std::string& form : {"${" + name + "}", "[[" + name + "]]", "$" + name}) {
      for (std::size_t at; (at = text.find(form)) != std::string::npos;) {
        // "$job" must not eat the start of "$jobs": check the next character.
        std::size_t end = at + form.size();
        if (form[1] != '{' && form[0] == '$' && end < text.size() &&
            (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) {
          text.replace(at, 1, "\x01");  // park it; restored below
          continue;
        }
        text.replace(at, form.size(), value);
      }
    }
    for (char& c : text)
      if (c == '\x01') c = '$';
  }
  return text;
}

// Fills the query variables in dashboard order like Grafana does: label_values(selector,
// label) over the series API, each selector seeing the variables before it. `use_all` picks
// the All value (".*") where the variable allows it, else the first value.
core::Result<std::map<std::string, std::string>> ResolveVariables(int port, const json& dash,
                                                                  bool use_all) {
  std::map<std::string, std::string> values;
  std::regex label_values(R"(^label_values\((.*),\s*([A-Za-z_][A-Za-z0-9_]*)\)$)");
  for (const auto& v : dash["templating"]["list"]) {
    if (v.value("type", "") != "query") continue;
    std::string def = v.value("definition", ""), name = v["name"];
    std::smatch m;
    if (!std::regex_match(def, m, label_values))
      return core::InvalidArgument("variable " + name + ": unsupported query '" + def + "'");
    std::string selector = Substitute(m[1].str(), values);
    CCLTUNE_ASSIGN_OR_RETURN(json series,
                             PromApi(port, "/api/v1/series?match[]=" + UrlEncode(selector)));
    std::set<std::string> found;
    for (const auto& s : series)
      if (s.contains(m[2].str())) found.insert(s[m[2].str()]);
    if (found.empty())
      return core::NotFound("variable " + name + ": label_values(" + selector + ", " + m[2].str() +
                            ") is empty");
    values[name] =
        (use_all && v.value("includeAll", false)) ? v.value("allValue", ".*") : *found.begin();
  }
  return values;
}

// Runs every target of every panel; returns one line per query that returned nothing, an
// error, or a non-finite value.
std::vector<std::string> CheckPanels(int port, const json& dash,
                                     const std::map<std::string, std::string>& values,
                                     int& queries) {
  std::vector<std::string> problems;
  for (const auto& panel : AllPanels(dash)) {
    for (const auto& target : panel.value("targets", json::array())) {
      if (!target.contains("expr")) continue;
      ++queries;
      std::string expr = Substitute(target["expr"], values);
      std::string where = dash["uid"].get<std::string>() + " / " +
                          panel["title"].get<std::string>() + " / " + target.value("refId", "?") +
                          ": " + expr;
      auto data = Query(port, expr);
      if (!data.ok()) {
        problems.push_back(where + " → " + data.status().ToString());
        continue;
      }
      const json& result = (*data)["result"];
      if (result.empty()) problems.push_back(where + " → no series");
      for (const auto& s : result)
        if (!std::isfinite(std::stod(s["value"][1].get<std::string>())))
          problems.push_back(where + " → non-finite value " + s.dump());
    }
  }
  return problems;
}

TEST(Dashboards, EveryPanelHasAUnitTheDatasourceVariableAndAnExpr) {
  for (const char* name : kDashboards) {
    json dash = LoadDashboard(name);
    EXPECT_GE(dash.value("schemaVersion", 0), 36) << name;
    std::set<std::string> vars;
    for (const auto& v : dash["templating"]["list"]) vars.insert(v["name"].get<std::string>());
    for (const char* v : {"datasource", "namespace", "job", "fingerprint"})
      EXPECT_TRUE(vars.count(v)) << name << " lacks variable " << v;
    for (const auto& v : dash["templating"]["list"]) {
      if (v["name"] == "datasource") EXPECT_EQ(v["query"], "prometheus");
      // The live test resolves `definition`: it must be the query Grafana runs.
      if (v["type"] == "query") EXPECT_EQ(v["query"], v["definition"]) << v.dump();
    }
    for (const auto& panel : AllPanels(dash)) {
      if (panel.value("type", "") == "row") continue;
      std::string title = panel.value("title", "?");
      EXPECT_NE(panel["fieldConfig"]["defaults"].value("unit", ""), "") << name << ": " << title;
      EXPECT_EQ(panel["datasource"]["uid"], "${datasource}") << name << ": " << title;
      ASSERT_FALSE(panel.value("targets", json::array()).empty()) << name << ": " << title;
      for (const auto& t : panel["targets"]) EXPECT_NE(t.value("expr", ""), "") << title;
    }
  }
}

#ifdef CCLTUNE_TEST_HAVE_CONTROLLER
TEST(ControllerMetrics, PromtoolAcceptsTheControllerExposition) {
  controller::ControllerMetrics m;
  m.SetJobsByPhase({{"Running", 2}});
  m.CountReconcile("ok", 0.004);
  m.ObserveJobDuration(420);
  m.SetJobPreSyncWait("team-a", "allreduce-sweep", 0.012);
  m.SetResultCacheEntries(128);
  m.CountResultsRequest(200);
  auto out = RunCommand({"promtool", "check", "metrics"}, m.Text(), 30s);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->exit_code, 0) << out->output << "\n--- exposition:\n" << m.Text();
}
#else
TEST(ControllerMetrics, PromtoolAcceptsTheControllerExposition) {
  GTEST_SKIP() << "ccltune_controller_lib is not built (CCLTUNE_BUILD_CONTROLLER=OFF)";
}
#endif

TEST(Dashboards, EveryPanelQueryReturnsDataFromARealPrometheus) {
  TempDir pgw_dir("ccltune-pgw"), prom_dir("ccltune-prom");
  auto pgw = StartPushgateway(pgw_dir);
  ASSERT_TRUE(pgw.ok()) << pgw.status().ToString();
  auto run = ObservedRun::Start(pgw->url());
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ControllerExposition controller;
  auto controller_port = controller.Start();
  ASSERT_TRUE(controller_port.ok()) << controller_port.status().ToString();
  auto prom = StartPrometheus(prom_dir,
                              PrometheusConfig((*run)->metrics_ports, pgw->port, *controller_port));
  ASSERT_TRUE(prom.ok()) << prom.status().ToString();
  core::Status ready = WaitForData(prom->port);
  ASSERT_TRUE(ready.ok()) << ready.ToString() << "\n" << prom->process->LogTail();

  for (const char* name : kDashboards) {
    json dash = LoadDashboard(name);
    for (bool use_all : {false, true}) {
      auto values = ResolveVariables(prom->port, dash, use_all);
      ASSERT_TRUE(values.ok()) << name << ": " << values.status().ToString();
      int queries = 0;
      auto problems = CheckPanels(prom->port, dash, *values, queries);
      EXPECT_GT(queries, 4) << name;
      for (const auto& p : problems) ADD_FAILURE() << p;
      std::fprintf(stderr, "%s (%s): %d panel queries returned data\n", name,
                   use_all ? "All" : "first values", queries - static_cast<int>(problems.size()));
    }
  }
  // The pushed copy kept its grouping labels (honor_labels) and matches the scraped one.
  auto pushed = Query(prom->port, "ccltune_tuning_duration_seconds{job=\"ccltune\"}");
  ASSERT_TRUE(pushed.ok());
  ASSERT_EQ((*pushed)["result"].size(), 2u) << pushed->dump();
  for (const auto& s : (*pushed)["result"])
    EXPECT_EQ(s["metric"].value("ccltune_job", ""), (*run)->job_id) << s.dump();
}

}  // namespace
}  // namespace ccltune::testing

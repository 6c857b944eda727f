// The Helm chart: `helm lint` / `helm template` when helm is on PATH (the ChartHelm cases,
// ctest's metrics_chart_helm: Skipped where helm is not installed, as on Debian 12),
// the programs' PodMonitor off by default and selecting what the webhook adds,
// CRDs byte-identical to manifests/crds/, dashboards identical to dashboards/, RBAC rules equal
// to manifests/rbac/, optional parts gated on their value, the probes on their own port (chart
// and manifests), and every values.yaml key both referenced by a template and documented by a
// comment.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "tests/metrics/child_process.h"
#ifdef CCLTUNE_TEST_HAVE_CONTROLLER
#include <nlohmann/json.hpp>

#include "controller/admission/pod_injection.h"
#endif

namespace ccltune::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

fs::path Root() {
  const char* dir = std::getenv("CCLTUNE_SOURCE_DIR");
  return dir ? dir : CCLTUNE_TEST_SOURCE_DIR;
}
fs::path Chart() { return Root() / "charts" / "ccltune"; }

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Files of a directory (names only, sorted), for byte-for-byte directory comparisons.
std::set<std::string> Files(const fs::path& dir, const std::string& ext) {
  std::set<std::string> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ext) out.insert(e.path().filename());
  return out;
}

void ExpectSameDirectory(const fs::path& chart_dir, const fs::path& source_dir,
                         const std::string& ext) {
  auto chart = Files(chart_dir, ext), source = Files(source_dir, ext);
  ASSERT_FALSE(source.empty()) << source_dir << " has no " << ext << " files";
  EXPECT_EQ(chart, source) << "copy them: cp " << source_dir.string() << "/*" << ext << " "
                           << chart_dir.string() << "/";
  for (const auto& f : source)
    EXPECT_TRUE(chart.count(f) && ReadFile(chart_dir / f) == ReadFile(source_dir / f))
        << (chart_dir / f) << " differs from " << (source_dir / f);
}

std::string AllTemplates() {
  std::string all;
  for (const auto& e : fs::directory_iterator(Chart() / "templates")) all += ReadFile(e.path());
  return all;
}

// Leaf key paths of values.yaml ("redis.passwordSecret.name"); empty maps and lists are leaves.
void LeafPaths(const YAML::Node& node, const std::string& prefix, std::vector<std::string>& out) {
  if (!node.IsMap() || node.size() == 0) {
    out.push_back(prefix);
    return;
  }
  for (const auto& kv : node)
    LeafPaths(
        kv.second,
        prefix.empty() ? kv.first.as<std::string>() : prefix + "." + kv.first.as<std::string>(),
        out);
}

// A leaf is used when a template names it or one of its parents as a whole (toYaml of
// `.Values.resources` uses every key under it).
bool Referenced(const std::string& templates, const std::string& path) {
  for (std::string p = path;; p = p.substr(0, p.rfind('.'))) {
    std::regex use("\\.Values\\." + std::regex_replace(p, std::regex("\\."), "\\.") +
                   "(?![A-Za-z0-9_.])");
    if (std::regex_search(templates, use)) return true;
    if (p.find('.') == std::string::npos) return false;
  }
}

TEST(ChartHelm, LintAndTemplate) {
  if (!OnPath("helm")) GTEST_SKIP() << "helm is not on PATH: helm lint/template skipped";
  auto lint = RunCommand({"helm", "lint", "--strict", Chart().string()}, "", 120s);
  ASSERT_TRUE(lint.ok()) << lint.status().ToString();
  EXPECT_EQ(lint->exit_code, 0) << lint->output;
  for (const std::string& set :
       {std::string("dashboards.enabled=true,metrics.serviceMonitor.enabled=true,"
                    "metrics.podMonitor.enabled=true"),
        std::string("redis.enabled=false,redis.externalURL=redis://r:6379/0,rbac.create=false")}) {
    auto out = RunCommand(
        {"helm", "template", "t", Chart().string(), "--kube-version", "1.30.0", "--set", set}, "",
        120s);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(out->exit_code, 0) << set << "\n" << out->output;
    EXPECT_NE(out->output.find("kind: Deployment"), std::string::npos) << out->output;
  }
  // Without the bundled Redis, a URL is required: fail at render time, not in the cluster.
  auto missing = RunCommand({"helm", "template", "t", Chart().string(), "--kube-version", "1.30.0",
                             "--set", "redis.enabled=false"},
                            "", 120s);
  ASSERT_TRUE(missing.ok()) << missing.status().ToString();
  EXPECT_NE(missing->exit_code, 0);
  EXPECT_NE(missing->output.find("redis.externalURL is required"), std::string::npos)
      << missing->output;
}

TEST(Chart, CrdsAreIdenticalToManifests) {
  ExpectSameDirectory(Chart() / "crds", Root() / "manifests" / "crds", ".yaml");
}

TEST(Chart, DashboardsAreIdenticalToDashboardsDir) {
  ExpectSameDirectory(Chart() / "dashboards", Root() / "dashboards", ".json");
}

std::string FlowYaml(const YAML::Node& node) {
  YAML::Emitter out;
  out << YAML::Flow << node;
  return out.c_str();
}

// The rules block of a chart template has no template expressions: cut it out and parse it.
YAML::Node TemplateRules(const std::string& file, const std::string& end_marker) {
  std::string tpl = ReadFile(Chart() / "templates" / file);
  std::size_t from = tpl.find("rules:"), to = tpl.find(end_marker, from);
  if (from == std::string::npos) return YAML::Node();
  return YAML::Load(tpl.substr(from, to - from))["rules"];
}

TEST(Chart, RbacRulesEqualManifestsRbac) {
  std::map<std::string, YAML::Node> manifest_rules;  // kind → rules
  for (const auto& doc :
       YAML::LoadAllFromFile((Root() / "manifests/rbac/clusterrole.yaml").string()))
    if (doc["rules"]) manifest_rules[doc["kind"].as<std::string>()] = doc["rules"];
  ASSERT_TRUE(manifest_rules["ClusterRole"].IsSequence());
  ASSERT_TRUE(manifest_rules["Role"].IsSequence());
  EXPECT_EQ(FlowYaml(TemplateRules("clusterrole.yaml", "{{- end }}")),
            FlowYaml(manifest_rules["ClusterRole"]));
  EXPECT_EQ(FlowYaml(TemplateRules("leader-election-rbac.yaml", "---")),
            FlowYaml(manifest_rules["Role"]));
}

TEST(Chart, OptionalPartsAreGatedOnTheirValues) {
  const std::map<std::string, std::string> gates = {
      {"serviceaccount.yaml", ".Values.serviceAccount.create"},
      {"clusterrole.yaml", ".Values.rbac.create"},
      {"clusterrolebinding.yaml", ".Values.rbac.create"},
      {"leader-election-rbac.yaml", "and .Values.rbac.create .Values.leaderElection.enabled"},
      {"redis-deployment.yaml", ".Values.redis.enabled"},
      {"redis-service.yaml", ".Values.redis.enabled"},
      {"redis-pvc.yaml", ".Values.redis.enabled"},
      {"servicemonitor.yaml", ".Values.metrics.serviceMonitor.enabled"},
      {"podmonitor.yaml", ".Values.metrics.podMonitor.enabled"},
      {"programs-podmonitor.yaml", ".Values.programs.podMonitor.enabled"},
      {"dashboards-configmap.yaml", ".Values.dashboards.enabled"},
      {"pushgateway-deployment.yaml", ".Values.metrics.pushgateway.enabled"},
      {"pushgateway-service.yaml", ".Values.metrics.pushgateway.enabled"},
      {"pushgateway-servicemonitor.yaml",
       "and .Values.metrics.pushgateway.enabled .Values.metrics.serviceMonitor.enabled"}};
  for (const auto& [file, gate] : gates) {
    std::string text = ReadFile(Chart() / "templates" / file);
    EXPECT_EQ(text.rfind("{{- if " + gate + " }}\n", 0), 0u) << file << " must start with the gate";
    EXPECT_NE(text.rfind("{{- end }}"), std::string::npos) << file;
  }
  std::string cm = ReadFile(Chart() / "templates/dashboards-configmap.yaml");
  EXPECT_NE(cm.find("grafana_dashboard: \"1\""), std::string::npos);
  EXPECT_NE(cm.find(".Files.Get"), std::string::npos);
}

// The probe port (issue 35): /healthz and /readyz on their own listener, which the kubelet's
// probes must use, never the API port whose load would delay them.
TEST(Chart, ProbesUseTheirOwnPortInManifestsAndChart) {
  YAML::Node c = YAML::LoadFile((Root() / "manifests/controller/deployment.yaml")
                                    .string())["spec"]["template"]["spec"]["containers"][0];
  std::map<std::string, int> ports;
  for (const auto& p : c["ports"])
    ports[p["name"].as<std::string>()] = p["containerPort"].as<int>();
  std::set<std::string> args;
  for (const auto& a : c["args"]) args.insert(a.as<std::string>());
  ASSERT_EQ(ports.count("http"), 1u);
  ASSERT_EQ(ports.count("probes"), 1u);
  EXPECT_NE(ports["http"], ports["probes"]);
  EXPECT_EQ(args.count("--metrics-port=" + std::to_string(ports["http"])), 1u);
  EXPECT_EQ(args.count("--health-probe-bind-address=:" + std::to_string(ports["probes"])), 1u);
  EXPECT_EQ(c["livenessProbe"]["httpGet"]["port"].as<std::string>(), "probes");
  EXPECT_EQ(c["livenessProbe"]["httpGet"]["path"].as<std::string>(), "/healthz");
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["port"].as<std::string>(), "probes");
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["path"].as<std::string>(), "/readyz");

  const std::string tpl = ReadFile(Chart() / "templates/deployment.yaml");
  for (const std::string want :
       {"- --health-probe-bind-address=:{{ .Values.controller.probePort }}\n",
        "- name: probes\n          containerPort: {{ .Values.controller.probePort }}\n",
        "httpGet: {path: /healthz, port: probes}", "httpGet: {path: /readyz, port: probes}"}) {
    EXPECT_NE(tpl.find(want), std::string::npos) << "chart deployment lacks: " << want;
  }
  YAML::Node values = YAML::LoadFile((Chart() / "values.yaml").string())["controller"];
  EXPECT_NE(values["port"].as<int>(), values["probePort"].as<int>());
}

// Tuning pods' metrics (docs/metrics.md): the controller gets the chart's Pushgateway (its
// Service's name and port) or the external URL, and the linger; the Pushgateway is scraped
// with its pushed labels kept and runs with least privilege.
TEST(Chart, ControllerPointsTuningPodsAtThePushgateway) {
  const std::string deployment = ReadFile(Chart() / "templates/deployment.yaml");
  for (const std::string want :
       {"{{- with include \"ccltune.pushgatewayURL\" . }}\n", "- --pushgateway-url={{ . }}\n",
        "{{- if .Values.metrics.workerLingerSeconds }}\n",
        "- --metrics-linger={{ .Values.metrics.workerLingerSeconds }}\n"}) {
    EXPECT_NE(deployment.find(want), std::string::npos) << "chart deployment lacks: " << want;
  }
  const std::string helpers = ReadFile(Chart() / "templates/_helpers.tpl");
  EXPECT_NE(helpers.find("\"http://%s-pushgateway.%s.svc:9091\""), std::string::npos) << helpers;
  EXPECT_NE(helpers.find(".Values.metrics.pushgateway.externalURL"), std::string::npos);
  const std::string service = ReadFile(Chart() / "templates/pushgateway-service.yaml");
  EXPECT_NE(service.find("name: {{ include \"ccltune.fullname\" . }}-pushgateway\n"),
            std::string::npos);
  EXPECT_NE(service.find("- {name: http, port: 9091, targetPort: http}"), std::string::npos);
  const std::string monitor = ReadFile(Chart() / "templates/pushgateway-servicemonitor.yaml");
  EXPECT_NE(monitor.find("honorLabels: true"), std::string::npos);
  const std::string pod = ReadFile(Chart() / "templates/pushgateway-deployment.yaml");
  for (const std::string want :
       {"automountServiceAccountToken: false", "runAsNonRoot: true", "readOnlyRootFilesystem: true",
        "allowPrivilegeEscalation: false", "capabilities: {drop: [ALL]}"}) {
    EXPECT_NE(pod.find(want), std::string::npos) << "Pushgateway pod lacks: " << want;
  }
  YAML::Node values = YAML::LoadFile((Chart() / "values.yaml").string())["metrics"];
  EXPECT_FALSE(values["pushgateway"]["enabled"].as<bool>());
  EXPECT_NE(values["pushgateway"]["image"].as<std::string>().find(":v"), std::string::npos);
  const int linger = values["workerLingerSeconds"].as<int>();
  EXPECT_TRUE(linger >= 0 && linger <= 600) << linger;
}

TEST(Chart, EveryValueIsReferencedAndDocumented) {
  YAML::Node values = YAML::LoadFile((Chart() / "values.yaml").string());
  std::vector<std::string> leaves;
  LeafPaths(values, "", leaves);
  ASSERT_GT(leaves.size(), 20u);
  std::string templates = AllTemplates();
  for (const auto& path : leaves) EXPECT_TRUE(Referenced(templates, path)) << path << " unused";
  for (const char* required :
       {"image.repository", "rbac.create", "serviceAccount.create", "serviceAccount.name",
        "leaderElection.enabled", "redis.enabled", "redis.externalURL", "redis.passwordSecret.name",
        "redis.passwordSecret.key", "metrics.serviceMonitor.enabled",
        "metrics.serviceMonitor.labels", "dashboards.enabled", "replicaCount", "nodeSelector",
        "tolerations", "affinity", "resources.requests.cpu"})
    EXPECT_TRUE(std::find(leaves.begin(), leaves.end(), required) != leaves.end()) << required;
  // Documented: each key line has a comment line right above it or a comment at its end.
  std::istringstream in(ReadFile(Chart() / "values.yaml"));
  std::string previous;
  std::regex key_line(R"(^\s*([A-Za-z_][A-Za-z0-9_]*):)");
  int line_no = 0;
  for (std::string line; std::getline(in, line); previous = line) {
    ++line_no;
    std::smatch m;
    if (!std::regex_search(line, m, key_line)) continue;
    bool above = std::regex_search(previous, std::regex(R"(^\s*#)"));
    bool inline_comment = line.find(" # ") != std::string::npos;
    bool has_children = line.find_first_not_of(" ", line.find(':') + 1) == std::string::npos;
    EXPECT_TRUE(above || inline_comment || has_children)
        << "values.yaml:" << line_no << " key '" << m[1] << "' has no comment";
  }
}

// `helm template` with `set` (--set syntax): its output, or the test's failure.
std::string HelmTemplate(const std::string& set) {
  std::vector<std::string> argv = {"helm",           "template",       "t",
                                   Chart().string(), "--kube-version", "1.30.0"};
  if (!set.empty()) argv.insert(argv.end(), {"--set", set});
  auto out = RunCommand(argv, "", 120s);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return "";
  EXPECT_EQ(out->exit_code, 0) << set << "\n" << out->output;
  return out->output;
}

YAML::Node ProgramsPodMonitor(const std::string& rendered) {
  for (const auto& doc : YAML::LoadAll(rendered))
    if (doc["kind"] && doc["kind"].as<std::string>() == "PodMonitor" &&
        doc["metadata"]["name"].as<std::string>() == "t-ccltune-programs")
      return doc;
  return YAML::Node();
}

// The programs' PodMonitor (issue 45): absent by default; on, it selects the pods the webhook
// labels, on the port it adds, one endpoint per local rank (port + r), in the namespaces named.
TEST(ChartHelm, ProgramsPodMonitorOffByDefaultAndOnSelectsTelemetryPods) {
  if (!OnPath("helm")) GTEST_SKIP() << "helm is not on PATH: helm template skipped";
  EXPECT_FALSE(ProgramsPodMonitor(HelmTemplate("")));
  YAML::Node pm = ProgramsPodMonitor(
      HelmTemplate("programs.podMonitor.enabled=true,programs.podMonitor.ranksPerPod=2,"
                   "programs.podMonitor.namespaces={team-a,team-b}"));
  ASSERT_TRUE(pm) << "no PodMonitor t-ccltune-programs";
  EXPECT_EQ(pm["apiVersion"].as<std::string>(), "monitoring.coreos.com/v1");
  const YAML::Node match = pm["spec"]["selector"]["matchLabels"];
  ASSERT_EQ(match.size(), 1u);
  EXPECT_EQ(match["ccltune.io/metrics"].as<std::string>(), "true");
  EXPECT_EQ(match["ccltune.io/metrics"].Tag(), "!");  // quoted: a string, as labels must be
  const YAML::Node names = pm["spec"]["namespaceSelector"]["matchNames"];
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0].as<std::string>() + "," + names[1].as<std::string>(), "team-a,team-b");
  EXPECT_FALSE(pm["spec"]["namespaceSelector"]["any"]);
  const YAML::Node eps = pm["spec"]["podMetricsEndpoints"];
  ASSERT_EQ(eps.size(), 2u);
  for (const auto& ep : eps) {
    EXPECT_EQ(ep["port"].as<std::string>(), "ccltune-metrics");
    EXPECT_EQ(ep["path"].as<std::string>(), "/metrics");
    EXPECT_TRUE(ep["honorLabels"].as<bool>());
  }
  EXPECT_FALSE(eps[0]["relabelings"]);
  EXPECT_EQ(eps[1]["relabelings"][0]["replacement"].as<std::string>(), "$1:9465");
  EXPECT_EQ(eps[1]["relabelings"][0]["targetLabel"].as<std::string>(), "__address__");
  YAML::Node any = ProgramsPodMonitor(HelmTemplate("programs.podMonitor.enabled=true"));
  ASSERT_TRUE(any);
  EXPECT_TRUE(any["spec"]["namespaceSelector"]["any"].as<bool>());
  EXPECT_FALSE(any["spec"]["namespaceSelector"]["matchNames"]);
  EXPECT_EQ(any["spec"]["podMetricsEndpoints"].size(), 1u);
}

// What the PodMonitor selects is what the webhook adds (controller/admission): the label and
// the port name, read from the template and, where the controller is built, from InjectPod.
TEST(Chart, ProgramsPodMonitorSelectsWhatTheWebhookAdds) {
  const std::string tpl = ReadFile(Chart() / "templates/programs-podmonitor.yaml");
  EXPECT_NE(tpl.find("      ccltune.io/metrics: \"true\"\n"), std::string::npos) << tpl;
  EXPECT_NE(tpl.find("  - port: ccltune-metrics\n"), std::string::npos) << tpl;
  EXPECT_NE(tpl.find("add $.Values.webhook.metricsPort $r"), std::string::npos) << tpl;
#ifdef CCLTUNE_TEST_HAVE_CONTROLLER
  nlohmann::json pod = {
      {"metadata", {{"name", "trainer"}, {"labels", {{controller::kInjectLabel, "telemetry"}}}}},
      {"spec", {{"containers", {{{"name", "main"}, {"image", "pytorch"}}}}}}};
  controller::InjectConfig config;
  config.image = "ccltune:cuda";
  pod = pod.patch(controller::InjectPod(pod, config).patch);
  EXPECT_EQ(pod["metadata"]["labels"][controller::kMetricsLabel], "true");
  EXPECT_EQ(std::string(controller::kMetricsLabel), "ccltune.io/metrics");
  EXPECT_EQ(pod["spec"]["containers"][0]["ports"][0]["name"], "ccltune-metrics");
  YAML::Node values = YAML::LoadFile((Chart() / "values.yaml").string());
  EXPECT_EQ(pod["spec"]["containers"][0]["ports"][0]["containerPort"],
            values["webhook"]["metricsPort"].as<int>());
#else
  std::fprintf(stderr, "the controller is not built: InjectPod's label and port not compared\n");
#endif
}

}  // namespace
}  // namespace ccltune::testing

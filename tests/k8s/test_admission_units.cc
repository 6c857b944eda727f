// Unit tests of the pod-injection webhook's pure parts (controller/admission) and its
// certificates (controller/certs): each variant's patch applied to a pod, reinvocation adding
// nothing, the user's own variables kept, a pod's own parts under ccltune's names refused in
// the annotation, the AdmissionReview envelope's bad inputs and fields of the wrong type, and
// a serving certificate that verifies against its CA.
#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "controller/admission/admission_review.h"
#include "controller/admission/pod_injection.h"
#include "controller/certs/cert_authority.h"
#include "controller/certs/serving_certificate.h"
#include "controller/kube/base64.h"

namespace ccltune::controller {
namespace {

using Json = nlohmann::json;

InjectConfig Config() {
  InjectConfig c;
  c.image = "ghcr.io/ccltune/ccltune:0.1.0-cuda";
  c.redis_url = "redis://ccltune-redis.ccltune-system:6379/0";
  return c;
}

Json Pod(const std::string& inject, Json env = Json::array()) {
  Json pod = {{"metadata", {{"name", "trainer"}, {"labels", {{"app", "x"}}}}},
              {"spec", {{"containers", {{{"name", "main"}, {"image", "pytorch"}}}}}}};
  if (!inject.empty()) pod["metadata"]["labels"][kInjectLabel] = inject;
  if (!env.empty()) pod["spec"]["containers"][0]["env"] = env;
  return pod;
}

// The pod after the patch, as the API server applies it (nlohmann's RFC 6902 patch).
Json Apply(const Json& pod, const Injection& inj) { return pod.patch(inj.patch); }

std::string EnvOf(const Json& pod, const std::string& name, int container = 0) {
  for (const Json& e : pod["spec"]["containers"][container].value("env", Json::array()))
    if (e["name"] == name) return e.contains("value") ? e["value"].get<std::string>() : e.dump();
  return "<unset>";
}

TEST(PodInjection, PluginGetsInitContainerReadOnlyVolumeAndItsVariables) {
  Json pod = Apply(Pod("plugin"), InjectPod(Pod("plugin"), Config()));
  EXPECT_EQ(pod["spec"]["initContainers"][0]["name"], kInjectInitName);
  EXPECT_EQ(pod["spec"]["initContainers"][0]["image"], "ghcr.io/ccltune/ccltune:0.1.0-cuda");
  EXPECT_EQ(pod["spec"]["initContainers"][0]["command"].dump(),
            R"(["cp","-L","/usr/local/lib/libnccl-tuner-ccltune.so","/opt/ccltune/lib/"])");
  EXPECT_EQ(pod["spec"]["volumes"][0]["name"], kInjectVolume);
  EXPECT_EQ(pod["spec"]["containers"][0]["volumeMounts"][0]["readOnly"], true);
  EXPECT_EQ(EnvOf(pod, "NCCL_TUNER_PLUGIN"), "/opt/ccltune/lib/libnccl-tuner-ccltune.so");
  EXPECT_EQ(EnvOf(pod, "LD_PRELOAD"), "<unset>");
  EXPECT_EQ(EnvOf(pod, "CCLTUNE_REDIS_USERNAME"), "ccltune-reader");
  EXPECT_NE(EnvOf(pod, "CCLTUNE_REDIS_PASSWORD").find("\"secretKeyRef\""), std::string::npos);
  EXPECT_NE(EnvOf(pod, "CCLTUNE_NODE_NAME").find("spec.nodeName"), std::string::npos);
  // Telemetry's variables only with telemetry.
  for (const char* name : {"CCLTUNE_TELEMETRY", "NCCL_PROFILER_PLUGIN", "CCLTUNE_POD_NAME",
                           "CCLTUNE_POD_NAMESPACE", "CCLTUNE_METRICS_PORT"})
    EXPECT_EQ(EnvOf(pod, name), "<unset>") << name;
  EXPECT_EQ(pod["metadata"]["annotations"][kInjectedAnnotation], "plugin");
}

std::vector<std::string> EnvNames(const Json& pod, int container = 0) {
  std::vector<std::string> names;
  for (const Json& e : pod["spec"]["containers"][container].value("env", Json::array()))
    names.push_back(e["name"]);
  return names;
}

TEST(PodInjection, PreloadAndTelemetryTogether) {
  Json pod = Apply(Pod("preload.telemetry"), InjectPod(Pod("preload.telemetry"), Config()));
  EXPECT_EQ(pod["spec"]["initContainers"][0]["command"].dump(),
            R"(["cp","-L","/usr/local/lib/libccltune-nccl.so",)"
            R"("/usr/local/lib/libnccl-profiler-ccltune.so",)"
            R"("/usr/local/lib/libccltune-telemetry.so.1","/opt/ccltune/lib/"])");
  EXPECT_EQ(EnvNames(pod),
            (std::vector<std::string>{
                "CCLTUNE_REDIS_URL", "CCLTUNE_REDIS_USERNAME", "CCLTUNE_REDIS_PASSWORD",
                "CCLTUNE_NODE_NAME", "LD_PRELOAD", "TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK",
                "CCLTUNE_POD_NAME", "CCLTUNE_POD_NAMESPACE", "CCLTUNE_TELEMETRY",
                "NCCL_PROFILER_PLUGIN", "CCLTUNE_METRICS_PORT"}));
  EXPECT_EQ(EnvOf(pod, "LD_PRELOAD"), "/opt/ccltune/lib/libccltune-nccl.so");
  EXPECT_EQ(EnvOf(pod, "TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK"), "1");
  EXPECT_EQ(EnvOf(pod, "CCLTUNE_TELEMETRY"), "on");
  EXPECT_EQ(EnvOf(pod, "NCCL_PROFILER_PLUGIN"), "/opt/ccltune/lib/libnccl-profiler-ccltune.so");
  EXPECT_EQ(EnvOf(pod, "CCLTUNE_POD_NAME"),
            R"({"name":"CCLTUNE_POD_NAME","valueFrom":{"fieldRef":{"apiVersion":"v1",)"
            R"("fieldPath":"metadata.name"}}})");
  EXPECT_EQ(EnvOf(pod, "CCLTUNE_POD_NAMESPACE"),
            R"({"name":"CCLTUNE_POD_NAMESPACE","valueFrom":{"fieldRef":{"apiVersion":"v1",)"
            R"("fieldPath":"metadata.namespace"}}})");
  EXPECT_EQ(EnvOf(pod, "CCLTUNE_METRICS_PORT"), "9464");
  EXPECT_EQ(EnvOf(pod, "CCLTUNE_REDIS_USERNAME"), "ccltune-telemetry");
  EXPECT_EQ(pod["metadata"]["labels"][kMetricsLabel], "true");
  EXPECT_EQ(pod["spec"]["containers"][0]["ports"][0]["containerPort"], 9464);
  EXPECT_EQ(pod["metadata"]["annotations"][kInjectedAnnotation], "preload,telemetry");
}

TEST(PodInjection, ReinvocationAddsNothingAndNewContainersAreCaughtUp) {
  Json once = Apply(Pod("plugin.preload"), InjectPod(Pod("plugin.preload"), Config()));
  EXPECT_TRUE(InjectPod(once, Config()).patch.empty());
  // A later webhook adds a sidecar: the second call gives it the mount and environment only.
  once["spec"]["containers"].push_back({{"name", "sidecar"}, {"image", "x"}});
  Json twice = Apply(once, InjectPod(once, Config()));
  EXPECT_EQ(twice["spec"]["initContainers"].size(), 1u);
  EXPECT_EQ(twice["spec"]["volumes"].size(), 1u);
  EXPECT_EQ(EnvOf(twice, "LD_PRELOAD", 1), "/opt/ccltune/lib/libccltune-nccl.so");
  EXPECT_TRUE(InjectPod(twice, Config()).patch.empty());
}

TEST(PodInjection, UsersVariablesKeepTheirValuesAndLdPreloadIsAppendedTo) {
  Json env = {{{"name", "LD_PRELOAD"}, {"value", "/usr/lib/libjemalloc.so"}},
              {{"name", "NCCL_TUNER_PLUGIN"}, {"value", "/mine/tuner.so"}},
              {{"name", "CCLTUNE_REDIS_URL"}, {"value", "redis://mine:6379/0"}}};
  Json pod = Apply(Pod("plugin.preload", env), InjectPod(Pod("plugin.preload", env), Config()));
  EXPECT_EQ(EnvOf(pod, "LD_PRELOAD"),
            "/usr/lib/libjemalloc.so:/opt/ccltune/lib/libccltune-nccl.so");
  EXPECT_EQ(EnvOf(pod, "NCCL_TUNER_PLUGIN"), "/mine/tuner.so");
  EXPECT_EQ(EnvOf(pod, "CCLTUNE_REDIS_URL"), "redis://mine:6379/0");
  EXPECT_EQ(pod["metadata"]["annotations"][kInjectedAnnotation],
            "plugin,preload; container main keeps its own NCCL_TUNER_PLUGIN");
  EXPECT_TRUE(InjectPod(pod, Config()).patch.empty());
}

TEST(PodInjection, UsersOwnProfilerPluginAndTelemetrySettingKeepTheirValues) {
  Json env = {{{"name", "NCCL_PROFILER_PLUGIN"}, {"value", "/opt/inspector/libnccl-profiler.so"}},
              {{"name", "CCLTUNE_TELEMETRY"}, {"value", "off"}}};
  Json pod = Apply(Pod("telemetry", env), InjectPod(Pod("telemetry", env), Config()));
  EXPECT_EQ(EnvOf(pod, "NCCL_PROFILER_PLUGIN"), "/opt/inspector/libnccl-profiler.so");
  EXPECT_EQ(EnvOf(pod, "CCLTUNE_TELEMETRY"), "off");
  EXPECT_EQ(EnvOf(pod, "CCLTUNE_METRICS_PORT"), "9464");
  EXPECT_EQ(pod["spec"]["initContainers"][0]["command"].dump(),
            R"(["cp","-L","/usr/local/lib/libnccl-profiler-ccltune.so",)"
            R"("/usr/local/lib/libccltune-telemetry.so.1","/opt/ccltune/lib/"])");
  EXPECT_EQ(pod["metadata"]["annotations"][kInjectedAnnotation],
            "telemetry; container main keeps its own NCCL_PROFILER_PLUGIN");
  EXPECT_TRUE(InjectPod(pod, Config()).patch.empty());
}

TEST(PodInjection, UnknownValueGetsOnlyTheAnnotationNamingTheLabel) {
  Injection inj = InjectPod(Pod("preload.gpus"), Config());
  Json pod = Apply(Pod("preload.gpus"), inj);
  EXPECT_FALSE(pod["spec"].contains("initContainers"));
  EXPECT_EQ(pod["metadata"]["annotations"][kInjectedAnnotation],
            "none: label ccltune.io/inject: \"gpus\" is not one of plugin, preload, telemetry "
            "(join several with '.', e.g. preload.telemetry)");
}

TEST(AdmissionReview, BadEnvelopesAre400AndOtherKindsAllowedUnchanged) {
  EXPECT_EQ(ReviewAdmission("{", Config()).code, 400);
  EXPECT_EQ(ReviewAdmission("[]", Config()).code, 400);
  EXPECT_EQ(ReviewAdmission(std::string(100000, '['), Config()).code, 400);
  EXPECT_EQ(ReviewAdmission(R"({"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"})",
                            Config())
                .code,
            400);
  Json svc = {{"apiVersion", "admission.k8s.io/v1"},
              {"kind", "AdmissionReview"},
              {"request",
               {{"uid", "u1"},
                {"operation", "CREATE"},
                {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Service"}}},
                {"object", {{"metadata", {{"name", "s"}}}}}}}};
  AdmissionAnswer a = ReviewAdmission(svc.dump(), Config());
  EXPECT_EQ(a.code, 200);
  Json r = Json::parse(a.body)["response"];
  EXPECT_EQ(r["uid"], "u1");
  EXPECT_TRUE(r["allowed"].get<bool>());
  EXPECT_FALSE(r.contains("patch"));
}

TEST(AdmissionReview, PodCreateCarriesABase64JsonPatch) {
  Json review = {{"apiVersion", "admission.k8s.io/v1"},
                 {"kind", "AdmissionReview"},
                 {"request",
                  {{"uid", "u2"},
                   {"operation", "CREATE"},
                   {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                   {"object", Pod("plugin")}}}};
  Json r = Json::parse(ReviewAdmission(review.dump(), Config()).body)["response"];
  EXPECT_EQ(r["patchType"], "JSONPatch");
  Json ops = Json::parse(Base64Decode(r["patch"].get<std::string>()));
  EXPECT_EQ(Pod("plugin").patch(ops)["metadata"]["annotations"][kInjectedAnnotation], "plugin");
}

// A pod with every field the webhook reads, and one of each list it looks into.
Json RichPod() {
  Json pod = Pod(
      "plugin.preload.telemetry",
      {{{"name", "LD_PRELOAD"}, {"value", "/usr/lib/libjemalloc.so"}},
       {{"name", "MY_SECRET"}, {"valueFrom", {{"secretKeyRef", {{"name", "s"}, {"key", "k"}}}}}}});
  pod["metadata"]["namespace"] = "team-a";
  pod["metadata"]["annotations"] = {{"owner", "team-a"}};
  Json& c = pod["spec"]["containers"][0];
  c["command"] = {"python", "train.py"};
  c["volumeMounts"] = {{{"name", "data"}, {"mountPath", "/data"}, {"readOnly", true}}};
  c["ports"] = {{{"name", "http"}, {"containerPort", 8000}}};
  pod["spec"]["initContainers"] = {{{"name", "fetch"}, {"image", "busybox"}}};
  pod["spec"]["volumes"] = {{{"name", "data"}, {"emptyDir", Json::object()}}};
  return pod;
}

Json Review(const Json& pod) {
  return {{"apiVersion", "admission.k8s.io/v1"},
          {"kind", "AdmissionReview"},
          {"request",
           {{"uid", "u3"},
            {"operation", "CREATE"},
            {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
            {"object", pod}}}};
}

// Each field the webhook reads, given the wrong JSON type, is named in a one-line 400.
TEST(AdmissionReview, AFieldOfTheWrongTypeIs400NamingIt) {
  const std::vector<std::pair<std::string, Json>> cases = {
      {"/request/object/metadata/name", 5},
      {"/request/uid", 7},
      {"/request/operation", 5},
      {"/request/kind", "Pod"},
      {"/request/kind/version", Json::array()},
      {"/request/object", "pod"},
      {"/request/object/metadata", 5},
      {"/request/object/metadata/labels", Json::array()},
      {"/request/object/metadata/labels/ccltune.io~1inject", 1},
      {"/request/object/metadata/annotations", "x"},
      {"/request/object/spec", Json::array()},
      {"/request/object/spec/containers", Json::object()},
      {"/request/object/spec/containers/0", "main"},
      {"/request/object/spec/containers/0/name", 3},
      {"/request/object/spec/containers/0/env", Json::object()},
      {"/request/object/spec/containers/0/env/0/name", 1},
      {"/request/object/spec/containers/0/env/0/value", false},
      {"/request/object/spec/containers/0/env/1/valueFrom", "s"},
      {"/request/object/spec/containers/0/volumeMounts/0/mountPath", true},
      {"/request/object/spec/containers/0/ports/0/containerPort", "8000"},
      {"/request/object/spec/initContainers", Json::object()},
      {"/request/object/spec/initContainers/0/command", "cp"},
      {"/request/object/spec/volumes/0/name", 1},
      {"/request/object/spec/volumes/0/emptyDir", Json::array()},
  };
  const std::vector<std::string> expected = {
      "request.object.metadata.name: expected a string",
      "request.uid: expected a string",
      "request.operation: expected a string",
      "request.kind: expected an object",
      "request.kind.version: expected a string",
      "request.object: expected an object",
      "request.object.metadata: expected an object",
      "request.object.metadata.labels: expected an object",
      R"(request.object.metadata.labels["ccltune.io/inject"]: expected a string)",
      "request.object.metadata.annotations: expected an object",
      "request.object.spec: expected an object",
      "request.object.spec.containers: expected an array",
      "request.object.spec.containers[0]: expected an object",
      "request.object.spec.containers[0].name: expected a string",
      "request.object.spec.containers[0].env: expected an array",
      "request.object.spec.containers[0].env[0].name: expected a string",
      "request.object.spec.containers[0].env[0].value: expected a string",
      "request.object.spec.containers[0].env[1].valueFrom: expected an object",
      "request.object.spec.containers[0].volumeMounts[0].mountPath: expected a string",
      "request.object.spec.containers[0].ports[0].containerPort: expected an integer",
      "request.object.spec.initContainers: expected an array",
      "request.object.spec.initContainers[0].command: expected an array",
      "request.object.spec.volumes[0].name: expected a string",
      "request.object.spec.volumes[0].emptyDir: expected an object",
  };
  ASSERT_EQ(cases.size(), expected.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    Json review = Review(RichPod());
    review[Json::json_pointer(cases[i].first)] = cases[i].second;
    AdmissionAnswer a;
    EXPECT_NO_THROW(a = ReviewAdmission(review.dump(), Config())) << cases[i].first;
    EXPECT_EQ(a.code, 400) << cases[i].first;
    EXPECT_EQ(a.body, Json({{"error", expected[i]}}).dump()) << cases[i].first;
  }
}

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Every path of a pod in a review, as a JSON pointer and as the webhook names it.
void Paths(const Json& v, const std::string& pointer, const std::string& name,
           std::vector<std::pair<std::string, std::string>>& out) {
  out.push_back({pointer, name});
  if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i)
      Paths(v[i], pointer + "/" + std::to_string(i), name + "[" + std::to_string(i) + "]", out);
  } else if (v.is_object()) {
    for (const auto& [k, e] : v.items()) {
      std::string escaped;
      for (char ch : k) escaped += ch == '/' ? "~1" : ch == '~' ? "~0" : std::string(1, ch);
      const bool map = EndsWith(name, ".labels") || EndsWith(name, ".annotations");
      Paths(e, pointer + "/" + escaped, map ? name + "[\"" + k + "\"]" : name + "." + k, out);
    }
  }
}

// Whatever field of a pod is given whatever other type, the answer is 200 or a 400 naming
// exactly that field: never an exception (which the HTTP edge answers 500).
TEST(AdmissionReview, EveryFieldOfAPodRetypedIsAnsweredWithoutAnException) {
  std::vector<std::pair<std::string, std::string>> paths;
  Paths(RichPod(), "/request/object", "request.object", paths);
  const Json others[] = {5, 1.5, "s", true, Json::object(), Json::array(), Json()};
  int refused = 0;
  for (const auto& [pointer, name] : paths) {
    for (const Json& other : others) {
      Json review = Review(RichPod());
      if (review[Json::json_pointer(pointer)].type() == other.type()) continue;
      review[Json::json_pointer(pointer)] = other;
      AdmissionAnswer a;
      ASSERT_NO_THROW(a = ReviewAdmission(review.dump(), Config())) << pointer << " = " << other;
      ASSERT_TRUE(a.code == 200 || a.code == 400) << pointer << " = " << other << ": " << a.body;
      if (a.code == 400) {
        ++refused;
        EXPECT_EQ(Json::parse(a.body)["error"].get<std::string>().rfind(name + ": expected ", 0),
                  0u)
            << pointer << " = " << other << ": " << a.body;
      }
    }
  }
  EXPECT_GT(refused, 100);  // most fields are read: the walk did reach them
}

// What the annotation's claim needs: every container has ccltune-lib (an emptyDir that the
// init container ccltune-inject fills with `libs`) mounted at /opt/ccltune/lib.
void ExpectLibrariesDelivered(const Json& pod, const std::vector<std::string>& libs) {
  const Json& spec = pod.at("spec");
  bool volume = false, init = false;
  for (const Json& v : spec.value("volumes", Json::array()))
    volume |= v.value("name", "") == kInjectVolume && v.size() == 2 && v.contains("emptyDir");
  for (const Json& ic : spec.value("initContainers", Json::array())) {
    if (ic.value("name", "") != kInjectInitName) continue;
    const Json cmd = ic.value("command", Json::array());
    init = !cmd.empty() && cmd.back() == "/opt/ccltune/lib/";
    for (const auto& lib : libs)
      init &= std::find(cmd.begin(), cmd.end(), Json("/usr/local/lib/" + lib)) != cmd.end();
  }
  EXPECT_TRUE(volume) << spec.dump();
  EXPECT_TRUE(init) << spec.dump();
  for (const Json& c : spec.at("containers")) {
    bool mounted = false;
    for (const Json& m : c.value("volumeMounts", Json::array()))
      mounted |=
          m.value("name", "") == kInjectVolume && m.value("mountPath", "") == "/opt/ccltune/lib";
    EXPECT_TRUE(mounted) << c.dump();
  }
}

// A pod whose own parts take ccltune's names or mount path: only the annotation, saying why.
void ExpectRefused(const Json& pod, const std::string& why) {
  Injection inj = InjectPod(pod, Config());
  Json after = Apply(pod, inj);
  EXPECT_EQ(after["metadata"]["annotations"][kInjectedAnnotation], "none: " + why);
  EXPECT_EQ(inj.patch.size(), 1u) << inj.patch.dump();  // the annotation only
  EXPECT_FALSE(after["spec"]["containers"][0].contains("env")) << after.dump();
  EXPECT_TRUE(InjectPod(after, Config()).patch.empty());
}

TEST(PodInjection, APodsOwnInitContainerNamedLikeOursIsRefusedInTheAnnotation) {
  Json pod = Pod("preload");
  pod["spec"]["initContainers"] = {
      {{"name", kInjectInitName}, {"image", "busybox"}, {"command", {"sh", "-c", "echo hi"}}}};
  ExpectRefused(pod,
                "init container ccltune-inject is the pod's own, not ccltune's: rename it, "
                "ccltune needs that name");
}

TEST(PodInjection, APodsOwnVolumeNamedLikeOursIsRefusedInTheAnnotation) {
  Json pod = Pod("plugin");
  pod["spec"]["volumes"] = {{{"name", kInjectVolume}, {"configMap", {{"name", "app-config"}}}}};
  pod["spec"]["containers"][0]["volumeMounts"] = {
      {{"name", kInjectVolume}, {"mountPath", "/etc/app"}}};
  ExpectRefused(pod,
                "volume ccltune-lib is the pod's own (configMap), not ccltune's: rename it, "
                "ccltune needs that name");
}

TEST(PodInjection, AContainerMountingOurVolumeNameOrPathForItselfIsRefused) {
  Json pod = Pod("preload");
  pod["spec"]["volumes"] = {{{"name", kInjectVolume}, {"emptyDir", Json::object()}}};
  pod["spec"]["containers"][0]["volumeMounts"] = {
      {{"name", kInjectVolume}, {"mountPath", "/data"}}};
  ExpectRefused(pod,
                "container main mounts volume ccltune-lib at /data, not /opt/ccltune/lib: "
                "rename it, ccltune needs that name");
  pod = Pod("preload");
  pod["spec"]["volumes"] = {{{"name", "cache"}, {"emptyDir", Json::object()}}};
  pod["spec"]["containers"][0]["volumeMounts"] = {
      {{"name", "cache"}, {"mountPath", "/opt/ccltune/lib"}}};
  ExpectRefused(pod,
                "container main mounts volume cache at /opt/ccltune/lib: move it, ccltune needs "
                "that path");
}

// The pod's own text quoted in the annotation is cut short, between two UTF-8 characters: the
// review is still answered 200 with a patch the API server can apply.
TEST(PodInjection, ALongMountPathIsCutInTheAnnotation) {
  Json pod = Pod("preload");
  std::string path = "/";
  for (int i = 0; i < 5000; ++i) path += "\u00e9";  // é: two bytes each
  pod["spec"]["volumes"] = {{{"name", kInjectVolume}, {"emptyDir", Json::object()}}};
  pod["spec"]["containers"][0]["volumeMounts"] = {{{"name", kInjectVolume}, {"mountPath", path}}};
  AdmissionAnswer a = ReviewAdmission(Review(pod).dump(), Config());
  ASSERT_EQ(a.code, 200) << a.body.substr(0, 200);
  Json ops = Json::parse(Base64Decode(Json::parse(a.body)["response"]["patch"].get<std::string>()));
  const std::string note = pod.patch(ops)["metadata"]["annotations"][kInjectedAnnotation];
  EXPECT_LT(note.size(), 300u);
  EXPECT_EQ(note.rfind("none: container main mounts volume ccltune-lib at /\u00e9", 0), 0u) << note;
}

// `kubectl get pod -o json` of an injected pod, created again with one more variant: its parts
// are recognised as ours and the init container copies the new library too.
TEST(PodInjection, AnExportedInjectedPodWithAWiderLabelIsCaughtUp) {
  Json exported = Apply(Pod("plugin"), InjectPod(Pod("plugin"), Config()));
  exported["metadata"]["labels"][kInjectLabel] = "plugin.preload";
  exported["spec"]["initContainers"][0]["image"] = "ghcr.io/ccltune/ccltune:0.0.9-cuda";
  Json pod = Apply(exported, InjectPod(exported, Config()));
  EXPECT_EQ(pod["metadata"]["annotations"][kInjectedAnnotation], "plugin,preload");
  EXPECT_EQ(pod["spec"]["initContainers"].size(), 1u);
  EXPECT_EQ(pod["spec"]["volumes"].size(), 1u);
  ExpectLibrariesDelivered(pod, {"libnccl-tuner-ccltune.so", "libccltune-nccl.so"});
  EXPECT_EQ(EnvOf(pod, "LD_PRELOAD"), "/opt/ccltune/lib/libccltune-nccl.so");
  EXPECT_TRUE(InjectPod(pod, Config()).patch.empty());
}

// Whatever the annotation claims, the libraries are there: each variant, a pod with a sidecar
// added later, and a pod whose own emptyDir is already named ccltune-lib (which then serves).
TEST(PodInjection, AnInjectedAnnotationAlwaysMeansTheLibrariesAreDelivered) {
  Json sidecar = Apply(Pod("preload"), InjectPod(Pod("preload"), Config()));
  sidecar["spec"]["containers"].push_back({{"name", "sidecar"}, {"image", "envoy"}});
  Json own_empty_dir = Pod("plugin");
  own_empty_dir["spec"]["volumes"] = {{{"name", kInjectVolume}, {"emptyDir", Json::object()}}};
  for (const Json& before : {Pod("plugin"), Pod("preload.telemetry"), sidecar, own_empty_dir}) {
    Json pod = Apply(before, InjectPod(before, Config()));
    const std::string claim = pod["metadata"]["annotations"][kInjectedAnnotation];
    ASSERT_NE(claim.rfind("none", 0), 0u) << claim;
    std::vector<std::string> libs;
    if (claim.find("plugin") != std::string::npos) libs.push_back("libnccl-tuner-ccltune.so");
    if (claim.find("preload") != std::string::npos) libs.push_back("libccltune-nccl.so");
    if (claim.find("telemetry") != std::string::npos) libs.push_back("libccltune-telemetry.so.1");
    ExpectLibrariesDelivered(pod, libs);
  }
}

TEST(Certificates, ServingCertificateVerifiesAgainstItsCaAndLoads) {
  auto ca = MakeCa("test-ca", std::chrono::hours(1));
  ASSERT_TRUE(ca.ok()) << ca.status().ToString();
  auto leaf = MakeServingCert(*ca, {"svc.ns.svc", "127.0.0.1"}, std::chrono::hours(1));
  ASSERT_TRUE(leaf.ok()) << leaf.status().ToString();
  EXPECT_TRUE(KeyMatches(*leaf));
  EXPECT_FALSE(KeyMatches({leaf->cert_pem, ca->key_pem}));
  BIO* cb = BIO_new_mem_buf(ca->cert_pem.data(), -1);
  BIO* lb = BIO_new_mem_buf(leaf->cert_pem.data(), -1);
  X509* cac = PEM_read_bio_X509(cb, nullptr, nullptr, nullptr);
  X509* lc = PEM_read_bio_X509(lb, nullptr, nullptr, nullptr);
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, cac);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, lc, nullptr);
  EXPECT_EQ(X509_verify_cert(ctx), 1)
      << X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx));
  EXPECT_EQ(X509_check_ip_asc(lc, "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_host(lc, "svc.ns.svc", 0, 0, nullptr), 1);
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  X509_free(cac);
  X509_free(lc);
  BIO_free(cb);
  BIO_free(lb);
  auto v = ValidityOf(leaf->cert_pem);
  ASSERT_TRUE(v.ok());
  EXPECT_NEAR(std::chrono::duration<double>(v->not_after - v->not_before).count(), 3660, 2);
  ServingCertificate serving;
  EXPECT_FALSE(serving.Set(leaf->cert_pem, ca->key_pem).ok());
  EXPECT_TRUE(serving.Set(leaf->cert_pem, leaf->key_pem).ok());
  EXPECT_EQ(Base64Decode(Base64Encode("ab")), "ab");
  EXPECT_EQ(Base64Encode("abcd"), "YWJjZA==");
}

}  // namespace
}  // namespace ccltune::controller

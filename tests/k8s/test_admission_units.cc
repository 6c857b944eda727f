// Unit tests of the pod-injection webhook's pure parts (controller/admission) and its
// certificates (controller/certs): each variant's patch applied to a pod, reinvocation adding
// nothing, the user's own variables kept, the AdmissionReview envelope's bad inputs, and a
// serving certificate that verifies against its CA.
#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <nlohmann/json.hpp>
#include <string>
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

#include "controller/kube/kube_config.h"

#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "controller/kube/base64.h"

namespace ccltune::controller {
namespace {

constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount/";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// Finds the entry named `name` in a kubeconfig list (clusters, users, contexts).
YAML::Node FindNamed(const YAML::Node& list, const std::string& name) {
  if (!list || !list.IsSequence()) return YAML::Node();
  for (const auto& item : list) {
    if (item["name"] && item["name"].as<std::string>() == name) return item;
  }
  return YAML::Node();
}

// Relative file paths in a kubeconfig are relative to the kubeconfig's directory.
std::string Resolve(const std::string& kubeconfig_path, const std::string& file) {
  if (file.empty() || file[0] == '/') return file;
  auto slash = kubeconfig_path.rfind('/');
  return slash == std::string::npos ? file : kubeconfig_path.substr(0, slash + 1) + file;
}

core::Result<KubeConfig> FromContext(const YAML::Node& root, const std::string& path) {
  std::string ctx_name = root["current-context"] ? root["current-context"].as<std::string>() : "";
  YAML::Node ctx = FindNamed(root["contexts"], ctx_name);
  if (!ctx) return core::InvalidArgument(path + ": current-context '" + ctx_name + "' not found");
  std::string cluster_name = ctx["context"]["cluster"].as<std::string>("");
  std::string user_name = ctx["context"]["user"].as<std::string>("");
  YAML::Node cluster = FindNamed(root["clusters"], cluster_name)["cluster"];
  if (!cluster || !cluster["server"]) {
    return core::InvalidArgument(path + ": clusters[" + cluster_name + "].cluster.server missing");
  }
  KubeConfig c;
  c.server = cluster["server"].as<std::string>();
  c.insecure_skip_tls_verify = cluster["insecure-skip-tls-verify"].as<bool>(false);
  c.ca_file = Resolve(path, cluster["certificate-authority"].as<std::string>(""));
  c.ca_data = Base64Decode(cluster["certificate-authority-data"].as<std::string>(""));
  c.default_namespace = ctx["context"]["namespace"].as<std::string>("default");
  YAML::Node user = FindNamed(root["users"], user_name)["user"];
  if (user) {
    c.token = user["token"].as<std::string>("");
    c.token_file = Resolve(path, user["tokenFile"].as<std::string>(""));
  }
  return c;
}

}  // namespace

core::Result<KubeConfig> LoadKubeconfig(const std::string& path) {
  try {
    YAML::Node root = YAML::LoadFile(path);
    return FromContext(root, path);
  } catch (const std::exception& e) {
    return core::InvalidArgument("kubeconfig " + path + ": " + e.what());
  }
}

core::Result<KubeConfig> InClusterConfig() {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !port) {
    return core::FailedPrecondition(
        "not in a cluster (KUBERNETES_SERVICE_HOST unset): pass --kubeconfig");
  }
  KubeConfig c;
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6 service address
  c.server = "https://" + h + ":" + port;
  c.token_file = std::string(kServiceAccountDir) + "token";
  c.ca_file = std::string(kServiceAccountDir) + "ca.crt";
  std::string ns = Trim(ReadFile(std::string(kServiceAccountDir) + "namespace"));
  if (!ns.empty()) c.default_namespace = ns;
  return c;
}

std::string TokenSource::Token() {
  if (config_.token_file.empty()) return config_.token;
  struct stat st {};
  std::lock_guard<std::mutex> lock(mu_);
  if (stat(config_.token_file.c_str(), &st) != 0) return cached_;  // keep the last good one
  long long mtime = static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
  if (mtime != mtime_ns_) {
    cached_ = Trim(ReadFile(config_.token_file));
    mtime_ns_ = mtime;
  }
  return cached_;
}

}  // namespace ccltune::controller

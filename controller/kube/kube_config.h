// Where the API server is and how to authenticate: from a kubeconfig file (--kubeconfig) or
// from the pod's service account (in-cluster). The bearer token is re-read when its file
// changes, because projected service-account tokens rotate (about hourly).
#pragma once

#include <mutex>
#include <string>

#include "core/base/status.h"

namespace ccltune::controller {

struct KubeConfig {
  std::string server;      // "https://10.0.0.1:443" or "http://127.0.0.1:PORT"
  std::string token;       // static token (kubeconfig `token`)
  std::string token_file;  // re-read on change (in-cluster, kubeconfig `tokenFile`)
  std::string ca_file;     // PEM file
  std::string ca_data;     // PEM text (kubeconfig certificate-authority-data, decoded)
  bool insecure_skip_tls_verify = false;
  std::string default_namespace = "default";
};

// Reads the current context of a kubeconfig file. Errors name the missing field.
core::Result<KubeConfig> LoadKubeconfig(const std::string& path);
// KUBERNETES_SERVICE_HOST/PORT + /var/run/secrets/kubernetes.io/serviceaccount/.
core::Result<KubeConfig> InClusterConfig();

// Caches the token of a token file and re-reads it when the file's mtime changes.
class TokenSource {
 public:
  explicit TokenSource(KubeConfig config) : config_(std::move(config)) {}
  // "" when the config has no credentials (the simulator over HTTP).
  std::string Token();

 private:
  KubeConfig config_;
  std::mutex mu_;
  long long mtime_ns_ = -1;
  std::string cached_;
};

}  // namespace ccltune::controller

// What the injection webhook gives a pod that opts in (docs/inject.md): the image its init
// container copies the libraries from, where they are mounted, the cache and the Secrets that
// hold the programs' Redis credentials. Plain data, set once from the controller's flags.
#pragma once

#include <string>

namespace ccltune::controller {

// One Redis ACL user of programs (docs/design.md §12): its name and the Secret, in the pod's
// own namespace, that holds its password.
struct ProgramCredential {
  std::string user;
  std::string secret_name;
  std::string secret_key = "password";
};

struct InjectConfig {
  std::string image;                          // the cuda image (TAG-cuda)
  std::string source_dir = "/usr/local/lib";  // where that image keeps the libraries
  std::string mount_path = "/opt/ccltune/lib";
  std::string redis_url;  // without credentials: they come from the Secret
  // Reads winners only; telemetry pods get the other, which may also write their summaries.
  ProgramCredential reader{"ccltune-reader", "ccltune-redis-reader"};
  ProgramCredential telemetry{"ccltune-telemetry", "ccltune-redis-telemetry"};
  int metrics_port = 9464;
};

}  // namespace ccltune::controller

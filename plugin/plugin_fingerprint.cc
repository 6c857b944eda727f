// Fingerprint of a communicator (plugin_fingerprint.h).
#include "plugin/plugin_fingerprint.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdlib>

#include "core/gpu/fingerprint_probe.h"

namespace ccltune::plugin {

int LoadedNcclVersion() {
  using GetVersion = int (*)(int*);
  void* sym = dlsym(RTLD_DEFAULT, "ncclGetVersion");
  if (sym == nullptr) {
    // Loaded RTLD_LOCAL (e.g. by a Python extension): NOLOAD finds it without loading.
    if (void* h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD)) {
      sym = dlsym(h, "ncclGetVersion");
      dlclose(h);  // drops only the reference NOLOAD added
    }
  }
  int version = 0;
  if (sym == nullptr || reinterpret_cast<GetVersion>(sym)(&version) != 0) return 0;
  return version;
}

core::Result<std::string> CommunicatorFingerprint(std::size_t n_ranks, std::size_t n_nodes) {
  const char* pinned = std::getenv("CCLTUNE_FINGERPRINT");
  return gpu::CommunicatorFingerprint(n_ranks, n_nodes, LoadedNcclVersion(), pinned ? pinned : "",
                                      "CCLTUNE_FINGERPRINT");
}

}  // namespace ccltune::plugin

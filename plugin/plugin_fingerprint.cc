// Fingerprint of a communicator (plugin_fingerprint.h).
#include "plugin/plugin_fingerprint.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>

#include "worker/nccl/fingerprint_probe.h"

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

core::FingerprintInput CommunicatorFingerprintInput(std::size_t n_ranks, std::size_t n_nodes) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) device = 0;
  (void)cudaGetLastError();
  const int world = static_cast<int>(n_ranks);
  core::FingerprintInput in = worker::nccl::ProbeFingerprint(device, world, LoadedNcclVersion());
  // Duplicated from worker/rank_main.cc FingerprintOf (two lines): there the node count
  // comes from the ranks' host names, here from NCCL; both mean the same thing.
  in.nodes = static_cast<int>(n_nodes);
  in.gpus_per_node = world / std::max(1, in.nodes);
  return in;
}

core::Result<std::string> CommunicatorFingerprint(std::size_t n_ranks, std::size_t n_nodes) {
  if (const char* pinned = std::getenv("CCLTUNE_FINGERPRINT"); pinned && *pinned) {
    const std::string fp = pinned;
    const bool ok =
        fp.size() <= 64 && std::all_of(fp.begin(), fp.end(), [](char c) {
          return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' || c == '_';
        });
    if (!ok)
      return core::InvalidArgument("CCLTUNE_FINGERPRINT='" + fp +
                                   "' is not a fingerprint (1-64 of 0-9, a-z, '-', '_')");
    return fp;
  }
  return core::Fingerprint(CommunicatorFingerprintInput(n_ranks, n_nodes));
}

}  // namespace ccltune::plugin

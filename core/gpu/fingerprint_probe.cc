// Fingerprint inputs from CUDA, NCCL and /proc (fingerprint_probe.h).
#include "core/gpu/fingerprint_probe.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "core/node/node_name.h"

namespace ccltune::gpu {
namespace {

std::string DottedVersion(int code, int major_div, int minor_div) {
  return std::to_string(code / major_div) + "." + std::to_string((code % major_div) / minor_div);
}

// The kernel module version ("580.159.04") is what operators know the driver by;
// cudaDriverGetVersion only says which CUDA API level it supports.
std::string DriverVersion() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (std::getline(f, line)) {
    std::istringstream words(line);
    std::string w;
    while (words >> w) {
      if (!w.empty() && std::isdigit(static_cast<unsigned char>(w[0])) &&
          w.find('.') != std::string::npos) {
        return w;
      }
    }
  }
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess) return "unknown";
  return "cuda-" + DottedVersion(v, 1000, 10);
}

}  // namespace

std::string ProbeP2pSummary() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n < 2) return "none";
  int pairs = 0;
  int ok = 0;
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      int can = 0;
      ++pairs;
      if (cudaDeviceCanAccessPeer(&can, a, b) == cudaSuccess && can) ++ok;
    }
  }
  (void)cudaGetLastError();
  return ok == pairs ? "p2p-full" : ok > 0 ? "p2p-partial" : "none";
}

core::FingerprintInput ProbeFingerprint(int device, int world, int nccl_version) {
  core::FingerprintInput in;
  in.backend = "nccl";
  cudaDeviceProp prop{};
  in.gpu_model = cudaGetDeviceProperties(&prop, device) == cudaSuccess ? prop.name : "unknown";
  in.gpus_per_node = world;
  in.nodes = 1;
  in.p2p_summary = ProbeP2pSummary();
  // NCCL >= 2.9 codes versions as major*10000 + minor*100 + patch.
  in.nccl_version = std::to_string(nccl_version / 10000) + "." +
                    std::to_string((nccl_version % 10000) / 100) + "." +
                    std::to_string(nccl_version % 100);
  int rt = 0;
  in.cuda_runtime = cudaRuntimeGetVersion(&rt) == cudaSuccess ? DottedVersion(rt, 1000, 10) : "";
  in.driver = DriverVersion();
  (void)cudaGetLastError();
  return in;
}

core::FingerprintInput CommunicatorFingerprintInput(std::size_t n_ranks, std::size_t n_nodes,
                                                    int nccl_version) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) device = 0;
  (void)cudaGetLastError();
  const int world = static_cast<int>(n_ranks);
  core::FingerprintInput in = ProbeFingerprint(device, world, nccl_version);
  // As worker/rank/rank_main.cc FingerprintOf: there the node count comes from the ranks' node
  // names, here from NCCL (distinct NCCL_HOSTIDs, which ccltune sets from the node name) or
  // the runtime's exchange of node names; core/node/node_name.h is the one rule.
  in.nodes = static_cast<int>(n_nodes);
  in.gpus_per_node = core::GpusPerNode(world, in.nodes);
  return in;
}

core::Result<std::string> CommunicatorFingerprint(std::size_t n_ranks, std::size_t n_nodes,
                                                  int nccl_version, const std::string& pinned,
                                                  const std::string& source) {
  if (!pinned.empty()) {
    CCLTUNE_RETURN_IF_ERROR(core::CheckPinnedFingerprint(pinned, source));
    return pinned;
  }
  return core::Fingerprint(CommunicatorFingerprintInput(n_ranks, n_nodes, nccl_version));
}

}  // namespace ccltune::gpu

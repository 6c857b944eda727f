// ccltuneNcclShimInfo: what `ccltune check-nccl` prints. The shim, loaded as a program
// would load it, says which real NCCL it found and how, the versions, whether it would
// serve calls, and, for a communicator of `world` ranks on this node, the fingerprint it
// would compute and how many winners it would load. Never blocks beyond the winners' load
// bound; a missing GPU or cache is reported in the JSON, not raised.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>

#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/apply/winner_loader.h"
#include "core/gpu/fingerprint_probe.h"
#include "runtime/nccl_shim/real_nccl.h"
#include "runtime/nccl_shim/serve.h"
#include "runtime/nccl_shim/shim_export.h"
#include "runtime/runtime_config.h"

namespace ccltune::shim {
namespace {

std::string OwnPath() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&OwnPath), &info) == 0 || info.dli_fname == nullptr)
    return "?";
  return info.dli_fname;
}

int VisibleGpus() {
  int n = 0;
  const bool ok = cudaGetDeviceCount(&n) == cudaSuccess;
  (void)cudaGetLastError();
  return ok ? n : 0;
}

// The fingerprint and winner count a `world`-rank communicator on this node would get.
void AddWinners(int world, nlohmann::json* out) {
  core::Result<runtime::RuntimeConfig> cfg = runtime::ResolveConfig(nullptr);
  if (!cfg.ok()) {
    (*out)["winnersProblem"] = cfg.status().message();
    return;
  }
  const auto& src = cfg->source;
  (*out)["source"] = !src.results_file.empty() ? "file " + src.results_file
                     : !src.redis_url.empty()  ? std::string("redis (CCLTUNE_REDIS_URL)")
                                               : std::string("none");
  core::Result<std::string> fp = gpu::CommunicatorFingerprint(
      world, 1, Real().version, cfg->fingerprint, cfg->fingerprint_source);
  if (!fp.ok()) {
    (*out)["fingerprintProblem"] = fp.status().message();
    return;
  }
  (*out)["fingerprint"] = *fp;
  core::Result<apply::ParsedFile> loaded =
      apply::LoadWinners(src, *fp, std::chrono::steady_clock::now() + src.load_timeout);
  if (!loaded.ok()) {
    (*out)["winnersProblem"] = loaded.status().message();
    return;
  }
  int usable = 0;
  for (const auto& r : loaded->records) usable += r.world_size == world ? 1 : 0;
  (*out)["winners"] = usable;
  (*out)["rejected"] = loaded->rejected;
  if (loaded->rejected > 0) (*out)["firstRejection"] = loaded->first_error;
}

}  // namespace
}  // namespace ccltune::shim

// JSON into buf (NUL-terminated); 0 on success, the size needed when `len` is too small.
CCLTUNE_SHIM_EXPORT size_t ccltuneNcclShimInfo(int world, char* buf, size_t len) {
  using ccltune::shim::Real;
  nlohmann::json out;
  try {
    out["library"] = ccltune::shim::OwnPath();
    out["builtAgainst"] = std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) + "." +
                          std::to_string(NCCL_PATCH);
    const auto& real = Real();
    out["real"] = {
        {"found", real.found}, {"how", real.how}, {"path", real.path}, {"version", real.version}};
    out["serving"] = ccltune::shim::ShimOn();
    // How each shape of program is served; the per-communicator mode is in its summary
    // line ("ranks in one process" / "ranks in N processes").
    out["modes"] = {
        {"one rank per process", "served; peers' memory by CUDA IPC"},
        {"one process",
         "served (threads: nccl-tests -t N; one thread and several GPUs: -g N, "
         "ncclCommInitAll, groups of one call per communicator served or forwarded whole); "
         "peers' memory by direct peer access; destroy waits for no peer"},
        {"mixed", "not served (some processes hold several ranks, other ranks elsewhere)"}};
    if (!real.problem.empty()) out["problem"] = real.problem;
    if (world <= 0) world = ccltune::shim::VisibleGpus();
    out["world"] = world;
    if (world > 0) ccltune::shim::AddWinners(world, &out);
  } catch (const std::exception& e) {
    out["problem"] = std::string("internal error: ") + e.what();
  }
  const std::string text = out.dump();
  if (buf == nullptr || text.size() + 1 > len) return text.size() + 1;
  std::memcpy(buf, text.c_str(), text.size() + 1);
  return 0;
}

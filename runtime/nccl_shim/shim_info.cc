// ccltuneNcclShimReport: what `ccltune check-nccl` prints. The shim, loaded as a program
// would load it, says which real NCCL it found and how, the versions, whether it would
// serve calls (and if not, why: CCLTUNE_NCCL off, the real NCCL, no CUDA device), this
// process's node and what NCCL will group it by (after the shim's first-init step, which this
// runs: first_init.h), and, for a communicator of `world` ranks over `nodes` nodes, the
// fingerprint it would compute, how many winners it would load, the network settings it
// would set before NCCL's first init, and what each tuned size would run. Never blocks beyond the
// winners' load bound; a missing GPU or cache is reported in the JSON, not raised.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/apply/node_span.h"
#include "core/apply/winner_loader.h"
#include "core/gpu/fingerprint_probe.h"
#include "core/node/fingerprint_gap.h"
#include "core/node/node_name.h"
#include "runtime/dispatch_table.h"
#include "runtime/nccl_shim/first_init.h"
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

// "CUDA 13.0": the CUDA runtime linked in (statically), which needs a driver this new.
std::string CudartVersion() {
  return "CUDA " + std::to_string(CUDART_VERSION / 1000) + "." +
         std::to_string(CUDART_VERSION % 1000 / 10);
}

struct CudaDevices {
  int count = 0;
  std::string problem;  // why none: "no CUDA device ..."; empty when count > 0
};

// Machines without a GPU (CI) answer cudaErrorInsufficientDriver: no libcuda.so.1 to load.
CudaDevices VisibleGpus() {
  CudaDevices out;
  const cudaError_t err = cudaGetDeviceCount(&out.count);
  (void)cudaGetLastError();
  if (err == cudaSuccess && out.count > 0) return out;
  out.count = 0;
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (err == cudaSuccess || err == cudaErrorNoDevice) {
    out.problem = std::string("no CUDA device visible (CUDA_VISIBLE_DEVICES ") +
                  (visible == nullptr ? "unset" : "'" + std::string(visible) + "'") + ")";
  } else if (err == cudaErrorInsufficientDriver) {
    out.problem = "no CUDA device: the NVIDIA driver (libcuda.so.1) is missing or older than " +
                  CudartVersion() + " (cudaGetDeviceCount: " + cudaGetErrorName(err) + ")";
  } else {
    out.problem = std::string("no CUDA device: cudaGetDeviceCount: ") + cudaGetErrorName(err) +
                  ": " + cudaGetErrorString(err);
  }
  return out;
}

// Why calls would not be served here; empty when they would. ShimOn() alone is not enough:
// the winners run on the GPU, so without a device every communicator's context fails to build
// and each call is forwarded, and "serving calls: yes" would be false.
std::string NotServingReason(const RealNccl& real, const CudaDevices& gpus) {
  if (!ShimOn()) {
    if (!real.problem.empty()) return real.problem;
    const char* v = std::getenv("CCLTUNE_NCCL");
    return std::string("CCLTUNE_NCCL is '") + (v == nullptr ? "" : v) + "': every call forwarded";
  }
  return gpus.problem;
}

// This process's node and what NCCL will group it by once the first-init step ran.
nlohmann::json NodeReport() {
  const core::NodeExport& exported = ExportNodeOnce();  // as BeforeFirstInit does
  core::Result<core::NodeName> node = core::LocalNodeName();
  nlohmann::json out = {{"ncclGroupsBy", exported.text}};
  if (node.ok()) {
    out["name"] = node->name;
    out["source"] = node->source;
  } else {
    out["problem"] = node.status().message();
  }
  return out;
}

// What each tuned size of `world` ranks would run in this process (plain buffers, the
// application's own), with the network settings `net` holds in the environment by then.
nlohmann::json ApplyReport(const std::vector<apply::WinnerRecord>& records, int world, int nodes,
                           const NetPlan& net) {
  runtime::Capabilities caps;
  caps.world = world;
  caps.peer_problem = nodes > 1 ? "ranks on " + std::to_string(nodes) + " nodes"
                                : std::string();  // one node: as the probe will find it
  caps.process_env = apply::NetSettingsInEnvironment();
  for (const auto& [k, v] : net.env) caps.process_env.emplace(k, v);  // none is set already
  // NCCL hands the node count only: the ranks taken as spread evenly, and the node team as
  // init builds it where peer memory inside each node works (init's summary says otherwise).
  caps.span = {nodes, core::GpusPerNode(world, nodes), nodes > 0 && world % nodes == 0};
  caps.hier_problem = apply::HierSpanSkipReason(caps.span);
  const runtime::DispatchTable table = runtime::DispatchTable::Build(records, caps);
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : records) {
    const runtime::TableEntry* e = table.Lookup(r.op, r.dtype, r.redop, r.bytes, r.epilogue);
    if (e == nullptr || e->bytes != r.bytes) continue;  // not offered, or another world
    nlohmann::json row{{"op", core::OpName(r.op)},
                       {"dtype", core::DtypeName(r.dtype)},
                       {"redop", core::RedOpName(r.redop)},
                       {"bytes", r.bytes},
                       {"winner", r.winner},
                       {"runs", e->plain.name},
                       {"why", e->plain.reason}};
    // What a captured all-reduce runs on registered tensors (direct mode), where it differs.
    if (e->direct.name != e->plain.name) row["runsDirect"] = e->direct.name;
    // What the tune measured best for any buffer (issue 43), beside what this process runs.
    if (r.any_buffer) {
      row["anyBuffer"] = {{"choice", r.any_buffer->choice},
                          {"timeUs", r.any_buffer->time_us},
                          {"speedupVsDefault", r.any_buffer->speedup_vs_default}};
    }
    out.push_back(std::move(row));
  }
  return out;
}

// The fingerprint, winners, network settings and applied choices of a `world`-rank
// communicator over `nodes` nodes.
void AddWinners(int world, int nodes, nlohmann::json* out) {
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
      world, nodes, Real().version, cfg->fingerprint, cfg->fingerprint_source);
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
  if (loaded->records.empty() && cfg->fingerprint.empty()) {
    const std::string gap = core::DescribeFingerprintGap(
        core::FingerprintJson(gpu::CommunicatorFingerprintInput(world, nodes, Real().version)),
        loaded->other_fingerprints);
    if (!gap.empty()) (*out)["fingerprintGap"] = gap;
  }
  if (loaded->rejected > 0) (*out)["firstRejection"] = loaded->first_error;
  const NetPlan net = PlanNetSettings(*cfg, world, nodes, Real().version);
  (*out)["networkSettings"] = {{"text", net.text}, {"env", net.env}};
  (*out)["apply"] = ApplyReport(loaded->records, world, nodes, net);
}

}  // namespace
}  // namespace ccltune::shim

// JSON into buf (NUL-terminated); 0 on success, the size needed when `len` is too small.
// `world` <= 0: the visible GPUs; `nodes` <= 0: 1.
CCLTUNE_SHIM_EXPORT size_t ccltuneNcclShimReport(int world, int nodes, char* buf, size_t len) {
  using ccltune::shim::Real;
  nlohmann::json out;
  try {
    out["library"] = ccltune::shim::OwnPath();
    out["builtAgainst"] = std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) + "." +
                          std::to_string(NCCL_PATCH);
    const auto& real = Real();
    out["real"] = {
        {"found", real.found}, {"how", real.how}, {"path", real.path}, {"version", real.version}};
    const ccltune::shim::CudaDevices gpus = ccltune::shim::VisibleGpus();
    const std::string not_serving = ccltune::shim::NotServingReason(real, gpus);
    out["serving"] = not_serving.empty();
    if (!not_serving.empty()) out["servingProblem"] = not_serving;
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
    out["node"] = ccltune::shim::NodeReport();
    if (world <= 0) world = gpus.count;
    if (nodes <= 0) nodes = 1;
    out["world"] = world;
    out["nodes"] = nodes;
    if (world > 0 && nodes > world) {
      out["fingerprintProblem"] = std::to_string(nodes) + " nodes for " + std::to_string(world) +
                                  " ranks: a node holds at least one rank";
    } else if (world > 0) {
      ccltune::shim::AddWinners(world, nodes, &out);
    }
  } catch (const std::exception& e) {
    out["problem"] = std::string("internal error: ") + e.what();
  }
  const std::string text = out.dump();
  if (buf == nullptr || text.size() + 1 > len) return text.size() + 1;
  std::memcpy(buf, text.c_str(), text.size() + 1);
  return 0;
}

// libccltune-inproc-tuner.so: an NCCL tuner plugin (ABI v5) whose only policy is "whatever
// the backend forced right now" (inproc_tuner_api.h). The few ABI declarations NCCL's
// tuner_v5.h defines are restated here, so this file needs no NCCL internals.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "worker/nccl/inproc_tuner_api.h"

namespace {

// --- NCCL tuner ABI v5 (layout from NCCL's src/include/plugin/tuner/tuner_v5.h) ---
using NcclResult = int;  // ncclResult_t: 0 = ncclSuccess
constexpr NcclResult kNcclSuccess = 0;
constexpr int kNumAlgorithms = 7;  // Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT
constexpr int kNumProtocols = 3;   // LL, LL128, Simple
using NcclDebugLogger = void (*)(int level, unsigned long flags, const char* file, int line,
                                 const char* fmt, ...);
struct NvlDomainInfoV5 {
  int nNvlDomains;
  int minRanksPerNvlDomain;
  int maxRanksPerNvlDomain;
};
struct TunerConstantsV5;  // only passed through
struct TunerV5 {
  const char* name;
  NcclResult (*init)(void** ctx, std::uint64_t comm_id, std::size_t n_ranks, std::size_t n_nodes,
                     NcclDebugLogger log, NvlDomainInfoV5* nvl, TunerConstantsV5* constants);
  NcclResult (*getCollInfo)(void* ctx, int coll_type, std::size_t n_bytes, int num_pipe_ops,
                            float** cost_table, int num_algo, int num_proto, int reg_buff,
                            int* n_channels);
  NcclResult (*finalize)(void* ctx);
};

// The forced choice is process state by nature: the backend sets it for whichever of its
// communicators runs next. Per-communicator contexts would not know which call is whose.
struct ForcedChoice {
  int coll = -1;
  int algo = -1;
  int proto = -1;
  int channels = 0;
};

std::mutex g_mu;
ForcedChoice g_forced;
CcltuneTunerStats g_stats{};

struct Context {
  std::uint64_t comm_id;
};

NcclResult Init(void** ctx, std::uint64_t comm_id, std::size_t, std::size_t, NcclDebugLogger,
                NvlDomainInfoV5*, TunerConstantsV5*) {
  *ctx = new Context{comm_id};
  return kNcclSuccess;
}

std::uint32_t OfferedMask(float (*table)[kNumProtocols], int num_algo) {
  std::uint32_t mask = 0;
  for (int a = 0; a < num_algo && a < kNumAlgorithms; ++a) {
    for (int p = 0; p < kNumProtocols; ++p) {
      if (table[a][p] >= 0) mask |= 1u << (a * kNumProtocols + p);
    }
  }
  return mask;
}

// Makes the forced entry the cheapest: 0 for it, 1e9 for every other offered entry.
// Entries below 0 are ones NCCL ruled out; they stay ruled out.
void Force(float (*table)[kNumProtocols], int num_algo, int algo, int proto) {
  for (int a = 0; a < num_algo; ++a) {
    for (int p = 0; p < kNumProtocols; ++p) {
      if (table[a][p] >= 0) table[a][p] = 1e9f;
    }
  }
  table[algo][proto] = 0.0f;
}

NcclResult GetCollInfo(void*, int coll_type, std::size_t, int, float** cost_table, int num_algo,
                       int num_proto, int, int* n_channels) {
  if (num_proto != kNumProtocols || num_algo > kNumAlgorithms) return kNcclSuccess;
  auto* table = reinterpret_cast<float(*)[kNumProtocols]>(cost_table);
  std::lock_guard<std::mutex> lock(g_mu);
  ++g_stats.calls;
  if (coll_type >= 0 && coll_type < 8)
    g_stats.offered_mask[coll_type] = OfferedMask(table, num_algo);
  if (coll_type != g_forced.coll) return kNcclSuccess;
  if (g_forced.algo >= 0) {
    if (g_forced.algo >= num_algo || table[g_forced.algo][g_forced.proto] < 0) {
      ++g_stats.unavailable;
      return kNcclSuccess;
    }
    Force(table, num_algo, g_forced.algo, g_forced.proto);
  }
  if (g_forced.channels > 0 && n_channels != nullptr) *n_channels = g_forced.channels;
  ++g_stats.forced;
  return kNcclSuccess;
}

NcclResult Finalize(void* ctx) {
  delete static_cast<Context*>(ctx);
  return kNcclSuccess;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) extern const TunerV5 ncclTunerPlugin_v5;
const TunerV5 ncclTunerPlugin_v5 = {"ccltune-inproc", Init, GetCollInfo, Finalize};

__attribute__((visibility("default"))) void ccltune_inproc_tuner_set(int coll, int algo, int proto,
                                                                     int channels) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_forced = ForcedChoice{coll, algo, algo >= 0 ? proto : -1, channels};
}

__attribute__((visibility("default"))) void ccltune_inproc_tuner_clear() {
  std::lock_guard<std::mutex> lock(g_mu);
  g_forced = ForcedChoice{};
}

__attribute__((visibility("default"))) void ccltune_inproc_tuner_stats(CcltuneTunerStats* out) {
  std::lock_guard<std::mutex> lock(g_mu);
  *out = g_stats;
}

}  // extern "C"

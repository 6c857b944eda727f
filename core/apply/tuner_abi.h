// The NCCL tuner plugin ABI, versions 5 and 4, restated from NCCL's
// src/include/plugin/tuner/tuner_v5.h and tuner_v4.h (and nccl_common.h for the enums), so
// the plugin needs no NCCL internals. Only layout matters: NCCL finds the exported structs
// by name (ncclTunerPlugin_v5, ncclTunerPlugin_v4) and calls through them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ccltune::apply::abi {

using NcclResult = int;  // ncclResult_t
inline constexpr NcclResult kSuccess = 0;

// ncclFunc_t (nccl_common.h): only the collectives NCCL consults the tuner for matter here.
enum NcclFunc : int {
  kFuncBroadcast = 0,
  kFuncReduce = 1,
  kFuncAllGather = 2,
  kFuncReduceScatter = 3,
  kFuncAllReduce = 4,
};
inline constexpr int kNumFuncs = 5;  // 0..4: the ones with a cost table

// Cost table indices (nccl_tuner.h): rows algorithms, columns protocols; -1 = ruled out.
inline constexpr int kAlgoTree = 0;
inline constexpr int kAlgoRing = 1;
inline constexpr int kNumAlgorithms = 7;  // Tree, Ring, CollNetDirect, CollNetChain, NVLS,
                                          // NVLSTree, PAT
inline constexpr int kProtoLL = 0;
inline constexpr int kProtoLL128 = 1;
inline constexpr int kProtoSimple = 2;
inline constexpr int kNumProtocols = 3;

// ncclDebugLogLevel / ncclDebugLogSubSys (nccl_common.h).
inline constexpr int kLogWarn = 2;
inline constexpr int kLogInfo = 3;
inline constexpr int kLogTrace = 5;
inline constexpr unsigned long kLogInit = 0x1;
inline constexpr unsigned long kLogTuning = 0x40;

using DebugLogger = void (*)(int level, unsigned long flags, const char* file, int line,
                             const char* fmt, ...);

struct NvlDomainInfoV5 {
  int nNvlDomains;
  int minRanksPerNvlDomain;
  int maxRanksPerNvlDomain;
};

// ncclTunerConstants_v5_t: NCCL's model constants, in/out. We leave them alone.
struct TunerConstantsV5 {
  double baseLatencies[7][3];
  double hwLatencies[3][7][3];
  double llMaxBws[4][3];
  double perChMaxRingLL128Bws[4][3];
  double perChMaxTreeLL128Bws[4][3];
  double perChMaxTreeBws[4][3];
  double perChMaxNVLSTreeBws[4][3];
};

using GetCollInfoFn = NcclResult (*)(void* ctx, int coll_type, std::size_t n_bytes,
                                     int num_pipe_ops, float** cost_table, int num_algo,
                                     int num_proto, int reg_buff, int* n_channels);

struct TunerV5 {
  const char* name;
  NcclResult (*init)(void** ctx, std::uint64_t comm_id, std::size_t n_ranks, std::size_t n_nodes,
                     DebugLogger log, NvlDomainInfoV5* nvl, TunerConstantsV5* constants);
  GetCollInfoFn getCollInfo;
  NcclResult (*finalize)(void* ctx);
};

struct TunerV4 {
  const char* name;
  NcclResult (*init)(std::size_t n_ranks, std::size_t n_nodes, DebugLogger log, void** ctx);
  GetCollInfoFn getCollInfo;
  NcclResult (*destroy)(void* ctx);
};

}  // namespace ccltune::apply::abi

// The NCCL profiler plugin ABI, versions 4, 5 and 6, restated from the documented headers of
// NCCL 2.29.7 (src/include/plugin/nccl_profiler.h, profiler/profiler_v4.h, _v5.h, _v6.h;
// v4's layout is unchanged since NCCL 2.27, v5's since 2.28) so that the plugin needs no NCCL
// file. Only layout matters: NCCL finds the exported structs by name (ncclProfiler_v6, then
// _v5, _v4, ...) and calls through them; field order and types below are that contract.
// NCCL 2.27 offers v4, 2.28 v5 (and v4), 2.29 v6 (and v5, v4).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace ccltune::plugin::profiler::abi {

using NcclResult = int;  // ncclResult_t
inline constexpr NcclResult kSuccess = 0;

// Event types (bits of the activation mask and the descriptor's `type`).
inline constexpr std::uint64_t kProfileGroup = 1u << 0;
inline constexpr std::uint64_t kProfileColl = 1u << 1;
inline constexpr std::uint64_t kProfileP2p = 1u << 2;
inline constexpr std::uint64_t kProfileProxyOp = 1u << 3;
inline constexpr std::uint64_t kProfileProxyStep = 1u << 4;
inline constexpr std::uint64_t kProfileProxyCtrl = 1u << 5;
inline constexpr std::uint64_t kProfileKernelCh = 1u << 6;
inline constexpr std::uint64_t kProfileNetPlugin = 1u << 7;
inline constexpr std::uint64_t kProfileGroupApi = 1u << 8;       // v5
inline constexpr std::uint64_t kProfileCollApi = 1u << 9;        // v5
inline constexpr std::uint64_t kProfileP2pApi = 1u << 10;        // v5
inline constexpr std::uint64_t kProfileKernelLaunch = 1u << 11;  // v5
inline constexpr std::uint64_t kProfileCeColl = 1u << 12;        // v6
inline constexpr std::uint64_t kProfileCeSync = 1u << 13;        // v6
inline constexpr std::uint64_t kProfileCeBatch = 1u << 14;       // v6

// ncclProfilerEventState_t: one enum shared by every version; we act on one state.
using EventState = int;
inline constexpr EventState kKernelChStop = 22;  // ncclProfilerKernelChStop

// ncclDebugLogLevel / ncclDebugLogSubSys.
inline constexpr int kLogWarn = 2;
inline constexpr int kLogInfo = 3;
inline constexpr unsigned long kLogInit = 0x1;
inline constexpr unsigned long kLogProfile = 0x4000;  // NCCL_PROFILE
using DebugLogger = void (*)(int level, unsigned long flags, const char* file, int line,
                             const char* fmt, ...);

// The union members every version from v4 on lays out identically.
struct CollDescrV4 {
  std::uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  std::size_t count;
  int root;
  const char* datatype;
  std::uint8_t nChannels;
  std::uint8_t nWarps;
  const char* algo;
  const char* proto;
};
struct P2pDescrV4 {
  const char* func;
  void* buff;
  const char* datatype;
  std::size_t count;
  int peer;
  std::uint8_t nChannels;
};
struct ProxyOpDescr {
  pid_t pid;
  std::uint8_t channelId;
  int peer;
  int nSteps;
  int chunkSize;
  int isSend;
};
struct ProxyStepDescr {
  int step;
};
struct KernelChDescr {
  std::uint8_t channelId;
  std::uint64_t pTimer;  // the channel's start, the GPU's %globaltimer (ns)
};
struct NetPluginDescr {
  std::int64_t id;
  void* data;
};

// ncclProfilerEventDescr_v4_t
struct EventDescrV4 {
  std::uint8_t type;
  void* parentObj;
  int rank;
  union {
    CollDescrV4 coll;
    P2pDescrV4 p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
    KernelChDescr kernelCh;
    NetPluginDescr netPlugin;
  };
};

// v5's API-level events and its coll/p2p (v4's plus the legacy group parent).
struct GroupApiDescr {
  bool graphCaptured;
  int groupDepth;
};
struct CollApiDescr {
  const char* func;
  std::size_t count;
  const char* datatype;
  int root;
  void* stream;
  bool graphCaptured;
};
struct P2pApiDescr {
  const char* func;
  std::size_t count;
  const char* datatype;
  void* stream;
  bool graphCaptured;
};
struct KernelLaunchDescr {
  void* stream;
};
struct CollDescrV5 {
  std::uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  std::size_t count;
  int root;
  const char* datatype;
  std::uint8_t nChannels;
  std::uint8_t nWarps;
  const char* algo;
  const char* proto;
  void* parentGroup;
};
struct P2pDescrV5 {
  const char* func;
  void* buff;
  const char* datatype;
  std::size_t count;
  int peer;
  std::uint8_t nChannels;
  void* parentGroup;
};

// ncclProfilerEventDescr_v5_t
struct EventDescrV5 {
  std::uint64_t type;
  void* parentObj;
  int rank;
  union {
    GroupApiDescr groupApi;
    CollApiDescr collApi;
    P2pApiDescr p2pApi;
    KernelLaunchDescr kernelLaunch;
    CollDescrV5 coll;
    P2pDescrV5 p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
    KernelChDescr kernelCh;
    NetPluginDescr netPlugin;
  };
};

// v6's copy-engine events (we do not ask for them; restated for the union's size).
struct CeCollDescr {
  std::uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  std::size_t count;
  int root;
  const char* datatype;
  const char* syncStrategy;
  bool intraBatchSync;
  std::uint32_t batchSize;
  std::uint32_t numBatches;
  std::uint32_t ceSeqNum;
  void* stream;
};
struct CeCollSyncDescr {
  bool isComplete;
  int nRanks;
};
struct CeCollBatchDescr {
  int numOps;
  std::size_t totalBytes;
  bool useIntraSync;
};

// ncclProfilerEventDescr_v6_t: v5's members at the same offsets, then the CE ones.
struct EventDescrV6 {
  std::uint64_t type;
  void* parentObj;
  int rank;
  union {
    GroupApiDescr groupApi;
    CollApiDescr collApi;
    P2pApiDescr p2pApi;
    KernelLaunchDescr kernelLaunch;
    CollDescrV5 coll;
    P2pDescrV5 p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
    KernelChDescr kernelCh;
    NetPluginDescr netPlugin;
    CeCollDescr ceColl;
    CeCollSyncDescr ceCollSync;
    CeCollBatchDescr ceCollBatch;
  };
};

// ncclProfilerEventStateArgs_v4_t, _v5_t and _v6_t (the same union).
union EventStateArgs {
  struct {
    std::size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void* data;
  } netPlugin;
  struct {
    std::uint64_t pTimer;  // the channel's stop, %globaltimer (ns)
  } kernelCh;
};

// ncclProfiler_v4_t: init takes (ctx, mask, commName, commHash, nNodes, nranks, rank, log).
struct ProfilerV4 {
  const char* name;
  NcclResult (*init)(void** context, int* eActivationMask, const char* commName,
                     std::uint64_t commHash, int nNodes, int nranks, int rank, DebugLogger logfn);
  NcclResult (*startEvent)(void* context, void** eHandle, EventDescrV4* eDescr);
  NcclResult (*stopEvent)(void* eHandle);
  NcclResult (*recordEventState)(void* eHandle, EventState eState, EventStateArgs* eStateArgs);
  NcclResult (*finalize)(void* context);
};

// ncclProfiler_v5_t and ncclProfiler_v6_t: init takes (ctx, commId, mask, commName, nNodes,
// nranks, rank, log); v6 has v5's functions with its own descriptor.
template <typename Descr>
struct ProfilerV5Table {
  const char* name;
  NcclResult (*init)(void** context, std::uint64_t commId, int* eActivationMask,
                     const char* commName, int nNodes, int nranks, int rank, DebugLogger logfn);
  NcclResult (*startEvent)(void* context, void** eHandle, Descr* eDescr);
  NcclResult (*stopEvent)(void* eHandle);
  NcclResult (*recordEventState)(void* eHandle, EventState eState, EventStateArgs* eStateArgs);
  NcclResult (*finalize)(void* context);
};
using ProfilerV5 = ProfilerV5Table<EventDescrV5>;
using ProfilerV6 = ProfilerV5Table<EventDescrV6>;

// The offsets NCCL's own headers give on LP64 (x86-64, aarch64): a change here is an ABI break.
static_assert(offsetof(EventDescrV4, parentObj) == 8 && offsetof(EventDescrV4, coll) == 24);
static_assert(offsetof(EventDescrV5, coll) == 24 && offsetof(EventDescrV6, coll) == 24);
static_assert(offsetof(CollDescrV4, count) == 32 && offsetof(CollDescrV4, datatype) == 48);
static_assert(offsetof(CollDescrV4, nChannels) == 56 && offsetof(CollDescrV4, algo) == 64);
static_assert(offsetof(CollDescrV5, proto) == 72 && offsetof(CollDescrV5, parentGroup) == 80);
static_assert(offsetof(KernelChDescr, pTimer) == 8 && sizeof(EventStateArgs) == 8);
static_assert(sizeof(EventDescrV4) == 24 + sizeof(CollDescrV4));
static_assert(sizeof(EventDescrV5) == 24 + sizeof(CollDescrV5));
static_assert(sizeof(EventDescrV6) == 24 + sizeof(CeCollDescr));

}  // namespace ccltune::plugin::profiler::abi

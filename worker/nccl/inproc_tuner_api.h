// The C interface between the NcclBackend and libccltune-inproc-tuner.so, the NCCL tuner
// plugin that forces one (algorithm, protocol, channels) per call. NCCL loads the .so by
// path (NCCL_TUNER_PLUGIN); the backend dlopen()s the same path, gets the same loaded
// object, and steers it through these functions. Thread-safe: NCCL may consult the tuner
// from its own group-launch thread while the backend thread sets the next choice.
#pragma once

#include <cstdint>

extern "C" {

// Indices of NCCL's cost table (tuner ABI v5): rows are algorithms, columns protocols.
enum CcltuneTunerAlgo { kCcltuneAlgoTree = 0, kCcltuneAlgoRing = 1 };
enum CcltuneTunerProto { kCcltuneProtoLL = 0, kCcltuneProtoLL128 = 1, kCcltuneProtoSimple = 2 };
// ncclFunc_t values the backend forces (same numbering as NCCL's ncclFunc_t).
enum CcltuneTunerColl {
  kCcltuneCollBroadcast = 0,
  kCcltuneCollAllGather = 2,
  kCcltuneCollReduceScatter = 3,
  kCcltuneCollAllReduce = 4,
};

struct CcltuneTunerStats {
  std::uint64_t calls;        // getCollInfo calls since load
  std::uint64_t forced;       // calls where the forced entry was applied
  std::uint64_t unavailable;  // calls of the forced collective whose entry was < 0
  // Per ncclFunc_t 0..7: bit (algo*3+proto) set when that entry was >= 0 at the last call.
  std::uint32_t offered_mask[8];
};

// Forces `algo`/`proto` (and `channels` when > 0) for calls of collective `coll` until
// cleared. algo < 0 forces nothing for the algorithm and protocol.
typedef void (*CcltuneTunerSetFn)(int coll, int algo, int proto, int channels);
typedef void (*CcltuneTunerClearFn)();
typedef void (*CcltuneTunerStatsFn)(CcltuneTunerStats* out);

void ccltune_inproc_tuner_set(int coll, int algo, int proto, int channels);
void ccltune_inproc_tuner_clear();
void ccltune_inproc_tuner_stats(CcltuneTunerStats* out);

}  // extern "C"

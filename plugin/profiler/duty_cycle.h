// The duty cycle (issue 45's cost point): NCCL's kernel-channel timing, which costs NCCL a
// profiler proxy operation per channel and the kernels their %globaltimer stamps, only for the
// calls that the telemetry library's min-over-ranks matcher samples; every call is still
// counted from its CollApi event, which costs NCCL nothing on the GPU.
//
// The switch is NCCL's activation mask: one int per process (ncclProfilerEventMask) whose
// address init receives. NCCL loads it once per API call, before the plugin hears of the
// call, and gives the call's task that value: a mask the plugin writes during call N governs
// call N+1 (NCCL 2.28 and 2.29's collTaskAppend alike). So during a call whose op has had s
// calls before it, the plugin asks for the timing of call s+1 of that op: exact for one op on
// one communicator; with several ops or communicators in one process the next call may be
// another's, which then is timed or not by that decision (best effort, never wrong counts: a
// task with Coll in its mask is timed whole, one without gets no Coll event at all).
// Thread-safety: every function from any thread.
#pragma once

#include <cstdint>

#include "core/telemetry/ccltune_telemetry.h"
#include "plugin/profiler/profiler_abi.h"

namespace ccltune::plugin::profiler {

// Between sampled calls: CollApi only. NCCL then starts the GroupApi and CollApi events on the
// calling thread and nothing at launch: no Coll, no Group, no proxy op, no stamps.
inline constexpr int kIdleMask = static_cast<int>(abi::kProfileCollApi);
// A sampled call: its Coll event and its channels' stamps too.
inline constexpr int kSampledMask =
    static_cast<int>(abi::kProfileCollApi | abi::kProfileColl | abi::kProfileKernelCh);
// ABI v4 (NCCL 2.27) has no CollApi event to count calls by: every call is timed.
inline constexpr int kAlwaysMask = static_cast<int>(abi::kProfileColl | abi::kProfileKernelCh);

// Whether the matcher samples the call numbered `seq` (of its communicator and op), as
// core/telemetry/rank_matcher.h's Sampled(), from the constants of the C header both share.
constexpr bool TimedSeq(std::uint64_t seq) {
  return seq % CCLTUNE_TELEMETRY_MATCH_WINDOW_CALLS < CCLTUNE_TELEMETRY_MATCH_SAMPLED_CALLS;
}
constexpr int MaskFor(std::uint64_t seq) { return TimedSeq(seq) ? kSampledMask : kIdleMask; }

// The mask for call `seq` as this process runs: MaskFor, or kSampledMask for every call once
// TimeEveryCall(true) (CCLTUNE_PROFILER_TIMING=every, profiler_settings.h).
int NextMask(std::uint64_t seq);
void TimeEveryCall(bool every);

// NCCL's mask, kept from init (process-wide: NCCL has one, every communicator's init gets its
// address). SetActivationMask writes it only when the value changes (a relaxed atomic store,
// as NCCL's example plugin does); before any KeepActivationMask it does nothing.
void KeepActivationMask(int* nccl_mask);
void SetActivationMask(int value);

}  // namespace ccltune::plugin::profiler

// libnccl-profiler-ccltune.so: NCCL profiler plugin that reports NCCL's own collectives,
// per rank, to libccltune-telemetry (docs/design.md §13). Exports ncclProfiler_v6, _v5 and
// _v4 side by side (NCCL 2.29, 2.28, 2.27 each take the newest they know); a version NCCL
// asks for that is not here is simply not served. All state lives in the per-communicator
// ProfilerContext. Nothing reaches NCCL but ncclSuccess: a failure is logged once and means
// "not profiled", never a failed communicator or a blocked call.
#include <cstdint>
#include <type_traits>

#include "plugin/profiler/duty_cycle.h"
#include "plugin/profiler/profiler_abi.h"
#include "plugin/profiler/profiler_context.h"

namespace ccltune::plugin::profiler {
namespace {

constexpr char kName[] = "ccltune";

abi::NcclResult Init(void** context, int* mask, const CommIdentity& comm, abi::DebugLogger log,
                     bool duty_cycle) {
  if (context != nullptr) *context = nullptr;
  if (context != nullptr && mask != nullptr) {
    try {
      *context = ProfilerContext::Create(comm, log, duty_cycle).release();
    } catch (...) {
      // Only allocation can throw (the log line's text); the communicator is then not profiled.
    }
  }
  // The mask is one process-wide variable in NCCL that other communicators' calls may be
  // reading now: one atomic store of the final value (telemetry is on or off for the whole
  // process; 0 means NCCL does no profiling work).
  if (mask == nullptr) return abi::kSuccess;
  if (context != nullptr && *context != nullptr && duty_cycle) KeepActivationMask(mask);
  const bool on = context != nullptr && *context != nullptr;
  __atomic_store_n(mask, on ? ProfilerContext::InitialMask(duty_cycle) : 0, __ATOMIC_RELAXED);
  return abi::kSuccess;
}

abi::NcclResult InitV5(void** context, std::uint64_t comm_id, int* mask, const char* /*name*/,
                       int /*n_nodes*/, int nranks, int rank, abi::DebugLogger log) {
  return Init(context, mask, {comm_id, rank, nranks}, log, /*duty_cycle=*/true);
}

abi::NcclResult InitV4(void** context, int* mask, const char* /*name*/, std::uint64_t comm_hash,
                       int /*n_nodes*/, int nranks, int rank, abi::DebugLogger log) {
  return Init(context, mask, {comm_hash, rank, nranks}, log, /*duty_cycle=*/false);
}

// v4's coll and v5/v6's have the same fields by name.
template <typename Coll>
CollStart FromColl(const Coll& c) {
  return {c.seqNumber, c.func, c.count, c.datatype, c.nChannels, c.algo, c.proto};
}

// v5/v6: CollApi (every call, duty_cycle.h), Coll and KernelCh (the timed ones); v4: Coll and
// KernelCh. NCCL also starts its GroupApi and Group events under these masks: those, and any
// type we do not know, get no handle (NCCL never stops or updates a null handle); so does
// CollApi, whose work is done at its start.
template <typename Descr>
abi::NcclResult StartEvent(void* context, void** handle, Descr* d) {
  if (handle == nullptr) return abi::kSuccess;
  *handle = nullptr;
  auto* ctx = static_cast<ProfilerContext*>(context);
  if (ctx == nullptr || d == nullptr) return abi::kSuccess;
  if (d->type == abi::kProfileColl) {
    *handle = ctx->StartColl(FromColl(d->coll));
  } else if (d->type == abi::kProfileKernelCh) {
    *handle = ctx->StartKernelCh(d->parentObj, d->kernelCh.pTimer);
  } else if constexpr (!std::is_same_v<Descr, abi::EventDescrV4>) {
    if (d->type == abi::kProfileCollApi)
      *handle = ctx->StartCollApi(
          {d->collApi.func, d->collApi.count, d->collApi.datatype, d->collApi.graphCaptured});
  }
  return abi::kSuccess;
}

abi::NcclResult StopEvent(void* handle) {
  if (handle != nullptr) ProfilerContext::Stop(handle);
  return abi::kSuccess;
}

abi::NcclResult RecordEventState(void* handle, abi::EventState state, abi::EventStateArgs* args) {
  if (handle != nullptr && args != nullptr && state == abi::kKernelChStop)
    ProfilerContext::RecordKernelStop(handle, args->kernelCh.pTimer);
  return abi::kSuccess;
}

abi::NcclResult Finalize(void* context) {
  // NCCL finalizes after its proxy thread stopped: no event of this context is running.
  delete static_cast<ProfilerContext*>(context);
  return abi::kSuccess;
}

}  // namespace
}  // namespace ccltune::plugin::profiler

namespace prof = ccltune::plugin::profiler;

extern "C" {
__attribute__((visibility("default"))) extern const prof::abi::ProfilerV6 ncclProfiler_v6;
__attribute__((visibility("default"))) extern const prof::abi::ProfilerV5 ncclProfiler_v5;
__attribute__((visibility("default"))) extern const prof::abi::ProfilerV4 ncclProfiler_v4;

const prof::abi::ProfilerV6 ncclProfiler_v6 = {
    prof::kName,     prof::InitV5,           prof::StartEvent<prof::abi::EventDescrV6>,
    prof::StopEvent, prof::RecordEventState, prof::Finalize};
const prof::abi::ProfilerV5 ncclProfiler_v5 = {
    prof::kName,     prof::InitV5,           prof::StartEvent<prof::abi::EventDescrV5>,
    prof::StopEvent, prof::RecordEventState, prof::Finalize};
const prof::abi::ProfilerV4 ncclProfiler_v4 = {
    prof::kName,     prof::InitV4,           prof::StartEvent<prof::abi::EventDescrV4>,
    prof::StopEvent, prof::RecordEventState, prof::Finalize};
}

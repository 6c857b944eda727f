#include "plugin/profiler/profiler_context.h"

#include <cstdlib>
#include <new>
#include <string>

#include "core/telemetry/ccltune_telemetry.h"
#include "plugin/profiler/duty_cycle.h"
#include "plugin/profiler/nccl_names.h"

namespace ccltune::plugin::profiler {
namespace {

// NCCL's logger is printf-like: our text goes through "%s", never as the format.
void Log(abi::DebugLogger log, int level, unsigned long flags, int line, const std::string& s) {
  if (log != nullptr) log(level, flags, __FILE__, line, "ccltune profiler: %s", s.c_str());
}

std::string Hex16(std::uint64_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[i] = kDigits[v & 0xf];
  return s;
}

void AtomicMin(std::atomic<std::uint64_t>& a, std::uint64_t v) {
  std::uint64_t cur = a.load(std::memory_order_relaxed);
  while (v < cur && !a.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

void AtomicMax(std::atomic<std::uint64_t>& a, std::uint64_t v) {
  std::uint64_t cur = a.load(std::memory_order_relaxed);
  while (v > cur && !a.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

}  // namespace

std::unique_ptr<ProfilerContext> ProfilerContext::Create(const CommIdentity& comm,
                                                         abi::DebugLogger log, bool duty_cycle) {
  if (ccltuneTelemetryEnabled() == 0) return nullptr;  // off: the library said nothing runs
  const InFlightSetting in_flight = ReadInFlightSetting(std::getenv(kInFlightVariable));
  if (!in_flight.error.empty()) {
    Log(log, abi::kLogWarn, abi::kLogInit, __LINE__,
        in_flight.error + "; NCCL's calls are not profiled");
    return nullptr;
  }
  const TimingSetting timing = ReadTimingSetting(std::getenv(kTimingVariable));
  if (!timing.error.empty()) {
    Log(log, abi::kLogWarn, abi::kLogInit, __LINE__,
        timing.error + "; NCCL's calls are not profiled");
    return nullptr;
  }
  TimeEveryCall(timing.every);
  std::unique_ptr<ProfilerContext> ctx(new (std::nothrow)
                                           ProfilerContext(comm, in_flight.value, log, duty_cycle));
  if (ctx == nullptr) return nullptr;
  ccltuneTelemetryComm_t c{};
  c.size = sizeof(c);
  c.comm_hash = comm.comm_hash;
  c.rank = comm.rank;
  c.nranks = comm.nranks;
  c.cuda_device = -1;  // the plugin links no CUDA; the library falls back to LOCAL_RANK
  ccltuneTelemetryCommInit(&c);
  Log(log, abi::kLogInfo, abi::kLogInit | abi::kLogProfile, __LINE__,
      "comm " + Hex16(comm.comm_hash) + " rank " + std::to_string(comm.rank) + "/" +
          std::to_string(comm.nranks) + ", up to " + std::to_string(in_flight.value) +
          " collectives in flight, " +
          (!duty_cycle ? "every call timed (ABI v4)"
           : timing.every
               ? "every call counted and timed (" + std::string(kTimingVariable) + "=every)"
               : "every call counted, kernel channels timed for the sampled ones"));
  return ctx;
}

ProfilerContext::ProfilerContext(const CommIdentity& comm, std::size_t in_flight,
                                 abi::DebugLogger log, bool duty_cycle)
    : comm_(comm), log_(log), duty_cycle_(duty_cycle), pool_(in_flight, this) {}

int ProfilerContext::InitialMask(bool duty_cycle) { return duty_cycle ? NextMask(0) : kAlwaysMask; }

void* ProfilerContext::StartCollApi(const CollApiStart& api) {
  const OpName op = LookupOp(api.func ? api.func : "");
  const DtypeName dtype = LookupDtype(api.datatype ? api.datatype : "");
  ccltuneTelemetryCall_t call{};
  call.size = sizeof(call);
  call.comm_hash = comm_.comm_hash;
  call.op = op.name;
  call.dtype = dtype.name;
  call.bytes = CallBytes(op, dtype, api.count, comm_.nranks);
  call.choice = choices_.NoteApiCall(op.id, call.bytes, dtype.id);
  call.seq = UINT64_MAX;  // NCCL's number comes with the Coll, which an untimed call lacks
  call.split = ccltuneTelemetrySplitNone;
  call.flags = CCLTUNE_TELEMETRY_CALL_UNTIMED;
  ccltuneTelemetryRecordCall(&call);
  // This call is number s of its op; the mask written now governs the next call (duty_cycle.h).
  // While a graph is being captured every next call is timed: a captured call's mask is fixed
  // for all its replays, which are the program's calls from then on (and cost what they cost
  // at capture: the sampled share of an eager stream does not apply to them).
  const std::uint64_t s = api_calls_[op.id].fetch_add(1, std::memory_order_relaxed);
  SetActivationMask(api.graph_captured ? kSampledMask : NextMask(s + 1));
  return nullptr;
}

const char* ProfilerContext::LearnFromColl(const OpName& op, std::uint64_t bytes,
                                           const CollStart& coll) {
  const std::uint8_t api_dtype = choices_.NoteRan(
      op.id, bytes, ChoiceId(coll.algo ? coll.algo : "", coll.proto ? coll.proto : ""));
  // NCCL skips its increment for graph-captured calls (unless timed): our count, which saw
  // the capture's CollApi, then runs ahead. A timed Coll names the truth.
  std::atomic<std::uint64_t>& calls = api_calls_[op.id];
  if (calls.load(std::memory_order_relaxed) != coll.seq + 1)
    calls.store(coll.seq + 1, std::memory_order_relaxed);
  return api_dtype != 0 ? DtypeById(api_dtype).name : nullptr;
}

void* ProfilerContext::StartColl(const CollStart& coll) {
  const OpName op = LookupOp(coll.func ? coll.func : "");
  const DtypeName dtype = LookupDtype(coll.datatype ? coll.datatype : "");
  const std::uint64_t bytes = CallBytes(op, dtype, coll.count, comm_.nranks);
  const char* api_dtype = duty_cycle_ ? LearnFromColl(op, bytes, coll) : nullptr;
  if (coll.channels <= 0) {
    // No channel events will tell when it ends (or NCCL did not say how many will come).
    ccltuneTelemetryDropped("profiler-coll-no-channels", 1);
    return nullptr;
  }
  CollEvent* e = pool_.Acquire();
  if (e == nullptr) {
    DropFull();
    return nullptr;
  }
  e->op = op.name;
  // The application's dtype where its CollApi said it (allGather, broadcast: not ncclInt8).
  e->dtype = api_dtype != nullptr ? api_dtype : dtype.name;
  e->bytes = bytes;
  e->choice = ChoiceName(coll.algo ? coll.algo : "", coll.proto ? coll.proto : "");
  e->seq = coll.seq;
  e->channels = coll.channels;
  e->stops_pending.store(coll.channels + 1, std::memory_order_release);
  return e;
}

void* ProfilerContext::StartKernelCh(void* parent, std::uint64_t start_ns) {
  if (parent == nullptr || !pool_.Contains(parent)) return nullptr;
  auto* e = static_cast<CollEvent*>(parent);
  // A Coll that finished already (NCCL sent more channels than it announced), or a channel
  // beyond those announced, which could stop after the event was recycled: not counted.
  if (!e->busy.load(std::memory_order_acquire)) return nullptr;
  if (e->channels_started.fetch_add(1, std::memory_order_relaxed) >= e->channels) return nullptr;
  if (start_ns != 0) AtomicMin(e->first_start, start_ns);
  return e;
}

void ProfilerContext::RecordKernelStop(void* handle, std::uint64_t stop_ns) {
  AtomicMax(static_cast<CollEvent*>(handle)->last_stop, stop_ns);
}

void ProfilerContext::Stop(void* handle) {
  auto* e = static_cast<CollEvent*>(handle);
  // The last of the Coll's own stop and its channels' stops reports the call.
  if (e->stops_pending.fetch_sub(1, std::memory_order_acq_rel) == 1)
    static_cast<ProfilerContext*>(e->owner)->Finish(e);
}

void ProfilerContext::Finish(CollEvent* e) {
  const std::uint64_t first = e->first_start.load(std::memory_order_relaxed);
  const std::uint64_t last = e->last_stop.load(std::memory_order_relaxed);
  if (first == kNoStart || last == 0 || last < first) {
    ccltuneTelemetryDropped("profiler-no-gpu-time", 1);
  } else {
    ccltuneTelemetryCall_t call{};
    call.size = sizeof(call);
    call.comm_hash = comm_.comm_hash;
    call.op = e->op;
    call.dtype = e->dtype;
    call.bytes = e->bytes;
    call.choice = e->choice;
    call.seq = e->seq;
    call.total_ns = last - first;
    call.split = ccltuneTelemetrySplitNone;
    call.channels = e->channels;
    // Under the duty cycle the call's CollApi counted it already.
    call.flags = duty_cycle_ ? CCLTUNE_TELEMETRY_CALL_COUNTED : 0u;
    ccltuneTelemetryRecordCall(&call);
  }
  pool_.Release(e);
}

void ProfilerContext::DropFull() {
  ccltuneTelemetryDropped("profiler-events-full", 1);
  if (!full_logged_.exchange(true, std::memory_order_relaxed)) {
    Log(log_, abi::kLogWarn, abi::kLogProfile, __LINE__,
        "comm " + Hex16(comm_.comm_hash) + ": " + std::to_string(pool_.capacity()) +
            " collectives in flight, the pool is full; further ones are not profiled while it "
            "stays full (counted in ccltune_program_telemetry_dropped_total{what=\"profiler-"
            "events-full\"}; raise " +
            kInFlightVariable + ")");
  }
}

}  // namespace ccltune::plugin::profiler

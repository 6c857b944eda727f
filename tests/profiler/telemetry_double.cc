#include "tests/profiler/telemetry_double.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace ccltune::testing {
namespace {

struct Log {
  std::mutex mu;
  std::vector<RecordedComm> comms;
  std::vector<RecordedCall> calls;
  std::vector<RecordedDrop> drops;
  std::atomic<bool> keep_calls{true};
  std::atomic<std::uint64_t> call_count{0};
  std::atomic<std::uint64_t> untimed_count{0};
};

std::vector<RecordedCall> CallsWhere(bool untimed) {
  std::vector<RecordedCall> out;
  for (const RecordedCall& c : TelemetryDoubleCalls())
    if (((c.flags & CCLTUNE_TELEMETRY_CALL_UNTIMED) != 0) == untimed) out.push_back(c);
  return out;
}

Log& TheLog() {
  static Log log;
  return log;
}

}  // namespace

void TelemetryDoubleReset() {
  Log& l = TheLog();
  std::lock_guard lock(l.mu);
  l.comms.clear();
  l.calls.clear();
  l.drops.clear();
  l.call_count = 0;
  l.untimed_count = 0;
}

std::vector<RecordedComm> TelemetryDoubleComms() {
  std::lock_guard lock(TheLog().mu);
  return TheLog().comms;
}

std::vector<RecordedCall> TelemetryDoubleCalls() {
  std::lock_guard lock(TheLog().mu);
  return TheLog().calls;
}

std::vector<RecordedDrop> TelemetryDoubleDrops() {
  std::lock_guard lock(TheLog().mu);
  return TheLog().drops;
}

void TelemetryDoubleKeepCalls(bool keep) { TheLog().keep_calls = keep; }
std::uint64_t TelemetryDoubleCallCount() { return TheLog().call_count; }
std::uint64_t TelemetryDoubleUntimedCount() { return TheLog().untimed_count; }
std::vector<RecordedCall> TelemetryDoubleCounts() { return CallsWhere(true); }
std::vector<RecordedCall> TelemetryDoubleTimes() { return CallsWhere(false); }

}  // namespace ccltune::testing

using ccltune::testing::TheLog;

extern "C" {

int ccltuneTelemetryAbiVersion(void) { return CCLTUNE_TELEMETRY_ABI_VERSION; }

int ccltuneTelemetryEnabled(void) {
  const char* v = std::getenv("CCLTUNE_TELEMETRY");
  return v != nullptr && std::strcmp(v, "on") == 0 ? 1 : 0;
}

void ccltuneTelemetryCommInit(const ccltuneTelemetryComm_t* c) {
  std::lock_guard lock(TheLog().mu);
  TheLog().comms.push_back({c->comm_hash, c->rank, c->nranks, c->cuda_device});
}

void ccltuneTelemetryRecordCall(const ccltuneTelemetryCall_t* c) {
  TheLog().call_count.fetch_add(1, std::memory_order_relaxed);
  // The plugin is built against this header: its struct is whole (size checked by the tests).
  const std::uint32_t flags = c->size >= sizeof(*c) ? c->flags : 0;
  if ((flags & CCLTUNE_TELEMETRY_CALL_UNTIMED) != 0)
    TheLog().untimed_count.fetch_add(1, std::memory_order_relaxed);
  if (!TheLog().keep_calls.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(TheLog().mu);
  TheLog().calls.push_back({c->comm_hash, c->op, c->dtype, c->bytes, c->choice, c->seq, c->total_ns,
                            static_cast<int>(c->split), c->wait_ns, c->transfer_ns, c->channels,
                            flags});
}

void ccltuneTelemetryForwarded(const char*, uint64_t) {}

void ccltuneTelemetryDropped(const char* what, uint64_t n) {
  std::lock_guard lock(TheLog().mu);
  TheLog().drops.push_back({what, n});
}

void ccltuneTelemetryTuned(uint64_t, const char*, const char*, uint64_t, const char*, double) {}
void ccltuneTelemetryShutdown(void) {}

}  // extern "C"

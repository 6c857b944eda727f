// The C ABI of ccltune_telemetry.h over ProgramTelemetry. No exception leaves these
// functions: each catches everything at the edge (a failure costs telemetry, never the
// program). The instance starts on first use of any function and is never freed: a thread
// that Shutdown's bounded wait left behind (a Redis call, a push) may still use it at exit.
#include <atomic>
#include <cstdlib>
#include <mutex>

#include "core/telemetry/abi_read.h"
#include "core/telemetry/ccltune_telemetry.h"
#include "core/telemetry/program_telemetry.h"

namespace {

using ccltune::telemetry::CallFromAbi;
using ccltune::telemetry::Clock;
using ccltune::telemetry::CommInfo;
using ccltune::telemetry::KnownPart;
using ccltune::telemetry::ProgramTelemetry;
using ccltune::telemetry::TextOrUnknown;

constexpr std::chrono::seconds kShutdownBound{2};

struct Library {
  std::mutex mu;  // held only to start and to stop
  // Set once started (or shut down): from then on callers read `telemetry` without the lock,
  // so a process with telemetry off pays one atomic load per call.
  std::atomic<bool> settled{false};
  bool shut = false;  // guarded by mu
  std::atomic<ProgramTelemetry*> telemetry{nullptr};
};

Library& Lib() {
  static Library* lib = new Library();  // never freed (see the file comment)
  return *lib;
}

// The running instance, started on first use; nullptr when off or shut down.
ProgramTelemetry* Instance() {
  Library& lib = Lib();
  if (lib.settled.load(std::memory_order_acquire))
    return lib.telemetry.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> lock(lib.mu);
  if (!lib.settled.load(std::memory_order_relaxed)) {
    try {
      auto t = ProgramTelemetry::Start([](const char* name) { return std::getenv(name); });
      lib.telemetry.store(t.release(), std::memory_order_release);
    } catch (...) {  // an allocation failure: telemetry stays off
    }
    lib.settled.store(true, std::memory_order_release);
  }
  return lib.telemetry.load(std::memory_order_acquire);
}

// Runs `f(telemetry)` when telemetry runs, swallowing whatever it throws.
template <class F>
void WithTelemetry(F f) {
  try {
    if (ProgramTelemetry* t = Instance()) f(*t);
  } catch (...) {
  }
}

}  // namespace

extern "C" {

int ccltuneTelemetryAbiVersion(void) { return CCLTUNE_TELEMETRY_ABI_VERSION; }

int ccltuneTelemetryEnabled(void) {
  try {
    return Instance() != nullptr ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

void ccltuneTelemetryCommInit(const ccltuneTelemetryComm_t* comm) {
  if (comm == nullptr) return;
  WithTelemetry([&](ProgramTelemetry& t) {
    const ccltuneTelemetryComm_t c = KnownPart(comm);
    t.CommInit(CommInfo{c.comm_hash, c.rank, c.nranks, c.cuda_device});
  });
}

void ccltuneTelemetryRecordCall(const ccltuneTelemetryCall_t* call) {
  if (call == nullptr) return;
  WithTelemetry([&](ProgramTelemetry& t) { t.RecordCall(CallFromAbi(call)); });
}

void ccltuneTelemetryForwarded(const char* reason, uint64_t n) {
  WithTelemetry([&](ProgramTelemetry& t) { t.Forwarded(TextOrUnknown(reason), n); });
}

void ccltuneTelemetryDropped(const char* what, uint64_t n) {
  WithTelemetry([&](ProgramTelemetry& t) { t.Dropped(TextOrUnknown(what), n); });
}

void ccltuneTelemetryTuned(uint64_t comm_hash, const char* op, const char* dtype, uint64_t bytes,
                           const char* choice, double tuned_seconds) {
  WithTelemetry([&](ProgramTelemetry& t) {
    t.Tuned(comm_hash, TextOrUnknown(op), TextOrUnknown(dtype), bytes, TextOrUnknown(choice),
            tuned_seconds);
  });
}

void ccltuneTelemetryShutdown(void) {
  try {
    Library& lib = Lib();
    ProgramTelemetry* t = nullptr;
    {
      std::lock_guard<std::mutex> lock(lib.mu);
      if (lib.shut) return;
      lib.shut = true;
      t = lib.telemetry.exchange(nullptr, std::memory_order_acq_rel);
      lib.settled.store(true, std::memory_order_release);  // a later call starts nothing
    }
    if (t != nullptr) t->Shutdown(Clock::now() + kShutdownBound);
  } catch (...) {
  }
}

}  // extern "C"

// At exit (or dlclose, which -z nodelete prevents): the last push, within kShutdownBound.
__attribute__((destructor)) static void ShutdownAtExit() { ccltuneTelemetryShutdown(); }

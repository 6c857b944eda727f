// The process's libccltune-telemetry.so.1 (core/telemetry/ccltune_telemetry.h), for the
// runtime and libccltune-nccl: loaded on first use, only when CCLTUNE_TELEMETRY is set and
// not "off", from the directory of the library this code is in (else the loader's path).
// The runtime does not link it: with telemetry off nothing more is loaded, and a missing
// library costs one line, never the program. The profiler plugin links it by soname, which
// finds this same loaded copy: one exporter per process.
#pragma once

#include <cstdint>

#include "core/telemetry/ccltune_telemetry.h"

namespace ccltune::runtime {

struct TelemetryApi {
  void (*comm_init)(const ccltuneTelemetryComm_t*) = nullptr;
  void (*record_call)(const ccltuneTelemetryCall_t*) = nullptr;
  void (*forwarded)(const char*, std::uint64_t) = nullptr;
  void (*dropped)(const char*, std::uint64_t) = nullptr;
  void (*tuned)(std::uint64_t, const char*, const char*, std::uint64_t, const char*,
                double) = nullptr;
};

// Null when telemetry is off, the library cannot be loaded or does not start (its own line
// says why). Thread-safe; decided once per process.
const TelemetryApi* Telemetry();

}  // namespace ccltune::runtime

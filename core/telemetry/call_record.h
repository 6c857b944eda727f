// CallRecord: the library's own copy of a ccltuneTelemetryCall_t (its strings owned), and
// what the library knows of a communicator. Header-only value types.
#pragma once

#include <cstdint>
#include <string>

#include "core/telemetry/ccltune_telemetry.h"

namespace ccltune::telemetry {

struct CallRecord {
  std::uint64_t comm_hash = 0;
  std::string op, dtype, choice;
  std::uint64_t bytes = 0;
  std::uint64_t seq = UINT64_MAX;
  std::uint64_t total_ns = 0;
  ccltuneTelemetrySplit_t split = ccltuneTelemetrySplitNone;
  std::uint64_t wait_ns = 0;
  std::uint64_t transfer_ns = 0;
  int channels = 0;
  std::uint32_t flags = 0;  // CCLTUNE_TELEMETRY_CALL_UNTIMED, _COUNTED (ccltune_telemetry.h)
};

// What a record's flags ask of the library.
inline bool CountsCall(const CallRecord& c) {
  return (c.flags & CCLTUNE_TELEMETRY_CALL_COUNTED) == 0;
}
inline bool HasTimes(const CallRecord& c) {
  return (c.flags & CCLTUNE_TELEMETRY_CALL_UNTIMED) == 0;
}

struct CommInfo {
  std::uint64_t comm_hash = 0;
  int rank = 0;
  int nranks = 1;
  int cuda_device = -1;
};

}  // namespace ccltune::telemetry

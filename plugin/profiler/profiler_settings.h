// The profiler plugin's one setting, CCLTUNE_PROFILER_EVENTS: how many collectives one
// communicator may have in flight (started by NCCL, their GPU work not yet seen finished).
// Each costs one event of the communicator's fixed pool (coll_event_pool.h).
#pragma once

#include <cstddef>
#include <string>

namespace ccltune::plugin::profiler {

inline constexpr char kInFlightVariable[] = "CCLTUNE_PROFILER_EVENTS";
inline constexpr std::size_t kDefaultInFlight = 1024;
inline constexpr std::size_t kMinInFlight = 16;
inline constexpr std::size_t kMaxInFlight = 65536;

struct InFlightSetting {
  std::size_t value = kDefaultInFlight;
  std::string error;  // empty when valid; else names the variable and the allowed range
};

// `text` is the variable's value, nullptr when unset (the default).
InFlightSetting ReadInFlightSetting(const char* text);

}  // namespace ccltune::plugin::profiler

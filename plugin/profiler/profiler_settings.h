// The profiler plugin's settings. CCLTUNE_PROFILER_EVENTS: how many collectives one
// communicator may have in flight (started by NCCL, their GPU work not yet seen finished);
// each costs one event of the communicator's fixed pool (coll_event_pool.h).
// CCLTUNE_PROFILER_TIMING: which calls NCCL times for us on ABI v5/v6 (duty_cycle.h):
// `sampled` (default) the matcher's, `every` all of them (what the duty cycle saves, measured).
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

inline constexpr char kTimingVariable[] = "CCLTUNE_PROFILER_TIMING";

struct TimingSetting {
  bool every = false;  // time every call, not only the sampled ones
  std::string error;   // empty when valid; else names the variable and its values
};

// `text` is the variable's value, nullptr when unset (sampled).
TimingSetting ReadTimingSetting(const char* text);

}  // namespace ccltune::plugin::profiler

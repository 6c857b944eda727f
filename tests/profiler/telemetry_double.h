// A test double of libccltune-telemetry.so.1 (core/telemetry/ccltune_telemetry.h): the same
// soname, so the plugin's dependency is satisfied by it when the test binary links it and
// then dlopen()s the plugin (the loader reuses a loaded object of the same soname). It keeps
// every call into the C ABI, strings copied, for the tests to compare with what they expect.
// Telemetry reads as on when CCLTUNE_TELEMETRY=on, as the real library's setting.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/telemetry/ccltune_telemetry.h"

namespace ccltune::testing {

struct RecordedComm {
  std::uint64_t comm_hash;
  int rank;
  int nranks;
  int cuda_device;
  bool operator==(const RecordedComm&) const = default;
};

struct RecordedCall {
  std::uint64_t comm_hash;
  std::string op;
  std::string dtype;
  std::uint64_t bytes;
  std::string choice;
  std::uint64_t seq;
  std::uint64_t total_ns;
  int split;
  std::uint64_t wait_ns;
  std::uint64_t transfer_ns;
  int channels;
  std::uint32_t flags;  // CCLTUNE_TELEMETRY_CALL_*
  bool operator==(const RecordedCall&) const = default;
};

struct RecordedDrop {
  std::string what;
  std::uint64_t n;
  bool operator==(const RecordedDrop&) const = default;
};

void TelemetryDoubleReset();
std::vector<RecordedComm> TelemetryDoubleComms();
std::vector<RecordedCall> TelemetryDoubleCalls();
// Those of TelemetryDoubleCalls() flagged UNTIMED (the counts), and the others (the times).
std::vector<RecordedCall> TelemetryDoubleCounts();
std::vector<RecordedCall> TelemetryDoubleTimes();
std::vector<RecordedDrop> TelemetryDoubleDrops();
// Off: calls are only counted, not kept (the cost benchmark measures the plugin alone).
void TelemetryDoubleKeepCalls(bool keep);
std::uint64_t TelemetryDoubleCallCount();     // every record
std::uint64_t TelemetryDoubleUntimedCount();  // the UNTIMED ones

}  // namespace ccltune::testing

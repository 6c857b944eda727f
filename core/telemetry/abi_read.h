// Reading a caller's C ABI struct (ccltune_telemetry.h) into the library's own values: up to
// the size both sides know, so that an older caller's smaller struct reads as zeros beyond
// its size and a newer caller's larger one is read up to ours. Header-only (c_api.cc and the
// unit tests).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "core/telemetry/call_record.h"
#include "core/telemetry/ccltune_telemetry.h"

namespace ccltune::telemetry {

// A caller of the first layout (no flags) sends 96 bytes, its tail padding unset: `flags`
// must lie beyond them to read as 0 (LP64).
static_assert(offsetof(ccltuneTelemetryCall_t, flags) >= 96);

template <class T>
T KnownPart(const T* in) {
  T out{};
  std::memcpy(&out, in, std::min(in->size, sizeof(T)));
  out.size = sizeof(T);
  return out;
}

inline std::string TextOrUnknown(const char* s) {
  return s != nullptr && *s != '\0' ? s : "unknown";
}

inline CallRecord CallFromAbi(const ccltuneTelemetryCall_t* call) {
  const ccltuneTelemetryCall_t c = KnownPart(call);
  // The library sets min-over-ranks itself; a caller's is read as no split.
  const auto split = c.split == ccltuneTelemetrySplitKernel ? c.split : ccltuneTelemetrySplitNone;
  return CallRecord{c.comm_hash,
                    TextOrUnknown(c.op),
                    TextOrUnknown(c.dtype),
                    TextOrUnknown(c.choice),
                    c.bytes,
                    c.seq,
                    c.total_ns,
                    split,
                    c.wait_ns,
                    c.transfer_ns,
                    c.channels,
                    c.flags};
}

}  // namespace ccltune::telemetry

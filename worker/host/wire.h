// What travels on a mesh socket: a hello pair when the connection is made, then frames.
// Every frame carries the collective's sequence number and step, so bytes of an aborted
// collective can never be taken for the next one (and a mesh is rebuilt after an abort).
// Fixed-size, native byte order: all ranks of a job run the same binary on one architecture.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/base/status.h"

namespace ccltune::worker::host {

inline constexpr std::uint32_t kHelloMagic = 0x434c4848;  // "HHLC"
inline constexpr std::uint32_t kFrameMagic = 0x434c4646;  // "FFLC"
inline constexpr std::uint16_t kWireVersion = 1;

// Sent by the connecting rank (lower rank) and answered by the accepting one. `token` is the
// receiver's nonce from this epoch's directory (proves the sender read it); `nonce` is the
// sender's own (the receiver checks it against the directory entry of the claimed rank).
struct Hello {
  std::uint32_t magic = kHelloMagic;
  std::uint16_t version = kWireVersion;
  std::uint16_t reserved = 0;
  std::int32_t from = -1;
  std::int32_t to = -1;
  std::int32_t epoch = -1;
  std::uint64_t token = 0;
  std::uint64_t nonce = 0;
};
static_assert(sizeof(Hello) == 40);

struct HelloExpect {
  int me = -1;
  int epoch = -1;
  std::uint64_t my_nonce = 0;
};

// OK when `h` is a hello addressed to `expect.me` for this epoch; the peer's own nonce is
// checked by the caller against the directory once the claimed rank is known.
core::Status CheckHello(const Hello& h, const HelloExpect& expect);

enum class FrameKind : std::uint32_t { kData = 1, kGoodbye = 2, kRecovering = 3 };

// Control frames come last on a connection and explain the EOF after them. kGoodbye: "I
// finished cleanly" (not a crash). kRecovering: "my collective failed, I drop this epoch's
// mesh for a new one" (peers get Aborted, not PeerLost, so tuning goes on). A crash
// (SIGKILL) or an abandoned mesh sends none: peers report PeerLost.
struct FrameHeader {
  std::uint32_t magic = kFrameMagic;
  FrameKind kind = FrameKind::kData;
  std::uint32_t seq = 0;   // collective number on this mesh
  std::uint32_t step = 0;  // step inside the collective
  std::uint64_t bytes = 0;
};
static_assert(sizeof(FrameHeader) == 24);

}  // namespace ccltune::worker::host

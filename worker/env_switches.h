// The worker's on/off environment switches. Read by `ccltune tune` and `ccltune worker`
// before any rank starts (one error line instead of one per rank) and by the backends.
// Header-only and CUDA-free, so the CLI checks them on machines built without the NCCL
// backend too.
//   CCLTUNE_PEER_MEMORY      may the NCCL backend use peer memory (ccltune's own kernels)?
//   CCLTUNE_BUFFER_ROTATION  rotate buffers past the cache (docs/design.md §2)? 0 measures from one
//                            buffer set that stays cached, as nccl-tests does: for comparing
//                            with it only, so a job run so publishes nothing.
#pragma once

#include <cstdlib>
#include <string>

#include "core/base/env_switch.h"
#include "core/base/status.h"

namespace ccltune::worker {

inline constexpr const char* kPeerMemoryEnv = "CCLTUNE_PEER_MEMORY";
inline constexpr const char* kBufferRotationEnv = "CCLTUNE_BUFFER_ROTATION";

using core::EnvSwitch;

inline core::Result<bool> PeerMemoryWanted(const char* value) {
  return EnvSwitch(kPeerMemoryEnv, value, "peer memory off", "probe it");
}

inline core::Result<bool> BufferRotationWanted(const char* value) {
  return EnvSwitch(kBufferRotationEnv, value,
                   "one buffer set, cached as in nccl-tests; nothing is published",
                   "rotate past the cache");
}

// Rotation as this process's environment sets it; a bad value reads as the default (the
// commands reject it before any rank starts).
inline bool BufferRotationOn() {
  const core::Result<bool> on = BufferRotationWanted(std::getenv(kBufferRotationEnv));
  return !on.ok() || on.value();
}

// Both switches as this process's environment sets them; the first bad one is the error.
inline core::Status CheckEnvSwitches() {
  CCLTUNE_RETURN_IF_ERROR(PeerMemoryWanted(std::getenv(kPeerMemoryEnv)).status());
  return BufferRotationWanted(std::getenv(kBufferRotationEnv)).status();
}

}  // namespace ccltune::worker

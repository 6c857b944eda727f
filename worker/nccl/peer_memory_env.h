// CCLTUNE_PEER_MEMORY: may the NCCL backend use peer memory (ccltune's own kernels)? Read
// by `ccltune tune` before it starts any rank (one error line instead of one per rank) and
// by every rank's NCCL runtime. Header-only and CUDA-free, so the CLI checks it on machines
// built without the NCCL backend too.
#pragma once

#include <string>

#include "core/status.h"

namespace ccltune::worker::nccl {

inline constexpr const char* kPeerMemoryEnv = "CCLTUNE_PEER_MEMORY";

// Unset or "1": probe peer memory; "0": off. Anything else is InvalidArgument naming the
// variable and what it allows (a typo must not silently leave the kernels on).
inline core::Result<bool> PeerMemoryWanted(const char* value) {
  if (value == nullptr || std::string(value) == "1") return true;
  if (std::string(value) == "0") return false;
  return core::InvalidArgument(std::string(kPeerMemoryEnv) + ": '" + value +
                               "' is not one of 0 (peer memory off), 1 (probe it, the default)");
}

}  // namespace ccltune::worker::nccl

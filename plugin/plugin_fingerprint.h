// The fingerprint of the communicator NCCL is initializing, computed as the worker does
// (core/gpu/fingerprint_probe.h for the device, driver, CUDA and P2P part; the topology
// part as worker/rank/rank_main.cc's FingerprintOf: nodes, ranks per node), so records the
// worker published for this machine and shape are found. CCLTUNE_FINGERPRINT pins it.
#pragma once

#include <cstddef>
#include <string>

#include "core/base/status.h"
#include "core/node/fingerprint.h"

namespace ccltune::plugin {

// NCCL's version code (ncclGetVersion) of the library that loaded us, found in the process
// without linking NCCL; 0 when there is none (a test harness).
int LoadedNcclVersion();

// CCLTUNE_FINGERPRINT when set (validated: 1-64 of 0-9 a-z - _), else the computed one.
core::Result<std::string> CommunicatorFingerprint(std::size_t n_ranks, std::size_t n_nodes);

}  // namespace ccltune::plugin

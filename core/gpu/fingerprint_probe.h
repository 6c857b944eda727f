// What makes NCCL results transferable (docs/design.md §4), read from the CUDA runtime, NCCL and
// the NVIDIA driver without NVML.
#pragma once

#include <cstddef>
#include <string>

#include "core/base/status.h"
#include "core/node/fingerprint.h"

namespace ccltune::gpu {

// gpus_per_node = world (one node: the backend spawns one rank per local GPU).
core::FingerprintInput ProbeFingerprint(int device, int world, int nccl_version);

// "p2p-full" when every pair of visible GPUs can access each other, "p2p-partial" when
// some can, "none" otherwise (or with one GPU).
std::string ProbeP2pSummary();

// The inputs for a communicator of `n_ranks` over `n_nodes` whose device is the calling
// thread's current CUDA device (NCCL calls a tuner's init on that thread; the runtime's
// init runs there too). The topology part is the worker's (rank_main.cc FingerprintOf).
core::FingerprintInput CommunicatorFingerprintInput(std::size_t n_ranks, std::size_t n_nodes,
                                                    int nccl_version);

// `pinned` when non-empty (validated: 1-64 of 0-9 a-z - _; `source` names the setting in
// the error), else the fingerprint computed from CommunicatorFingerprintInput.
core::Result<std::string> CommunicatorFingerprint(std::size_t n_ranks, std::size_t n_nodes,
                                                  int nccl_version, const std::string& pinned,
                                                  const std::string& source);

}  // namespace ccltune::gpu

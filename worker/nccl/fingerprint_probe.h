// What makes NCCL results transferable (DESIGN §4), read from the CUDA runtime, NCCL and
// the NVIDIA driver without NVML.
#pragma once

#include "core/fingerprint.h"

namespace ccltune::worker::nccl {

// gpus_per_node = world (one node: the backend spawns one rank per local GPU).
core::FingerprintInput ProbeFingerprint(int device, int world, int nccl_version);

// "p2p-full" when every pair of visible GPUs can access each other, "p2p-partial" when
// some can, "none" otherwise (or with one GPU).
std::string ProbeP2pSummary();

}  // namespace ccltune::worker::nccl

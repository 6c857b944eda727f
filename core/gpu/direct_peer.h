// Whether a buffer of this process can be handed to a peer device's kernel as it is.
// Ranks that are threads of one process (nccl-tests -g N, ncclCommInitAll) reach each
// other's ordinary cudaMalloc memory once peer access between their devices is enabled, so a
// group of their calls can run the pull kernels on the application's own buffers. Memory
// from the virtual memory API or a stream-ordered pool needs access grants of its own, and a
// peer kernel would fault on it: such buffers are never handed over.
#pragma once

#include <cstddef>

namespace ccltune::gpu {

// True when [p, p + bytes) lies in one allocation made by cudaMalloc (CUDA's "legacy IPC
// capable" memory). One driver query; never blocks.
bool InLegacyAllocation(const void* p, std::size_t bytes);

}  // namespace ccltune::gpu

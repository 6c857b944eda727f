// Whether a buffer of this process can be handed to a peer device's kernel as it is.
// Ranks that are threads of one process (nccl-tests -g N, ncclCommInitAll) reach each
// other's memory directly, so a group of their calls can run the pull kernels on the
// application's own buffers. Ordinary cudaMalloc memory is reachable once peer access
// between the devices is enabled (the runtime enables it at init); memory from the virtual
// memory API (ncclMemAlloc, PyTorch's expandable segments) only where its owner granted the
// device access. A buffer neither can vouch for is never handed over: a peer kernel would
// fault on it.
#pragma once

#include <cstddef>
#include <vector>

namespace ccltune::gpu {

// True when [p, p + bytes) lies in one allocation that every device of `devices` may read
// and write: cudaMalloc memory, or a mapping whose access the driver reports read-write for
// each device. Driver queries only; never blocks.
bool ReachableFrom(const void* p, std::size_t bytes, const std::vector<int>& devices);

// The driver's `name` (CUDA 12 ABI) through the runtime, which finds the driver the
// process loaded; null when it has none.
void* DriverEntry(const char* name);

}  // namespace ccltune::gpu

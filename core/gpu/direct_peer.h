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
#include <cstdint>
#include <optional>
#include <vector>

namespace ccltune::gpu {

// True when [p, p + bytes) lies in one allocation that every device of `devices` may read
// and write: cudaMalloc memory, or a mapping whose access the driver reports read-write for
// each device. Driver queries only; never blocks.
bool ReachableFrom(const void* p, std::size_t bytes, const std::vector<int>& devices);

// The allocation holding [p, p + bytes): its start, its size, and whether CUDA IPC can
// share it (cudaMalloc memory; otherwise a virtual-memory mapping). nullopt when p is not
// device memory or the range does not lie in one allocation. A driver query; never blocks.
struct Allocation {
  std::uintptr_t start = 0;
  std::size_t size = 0;
  bool legacy_ipc = false;
};
std::optional<Allocation> AllocationOf(const void* p, std::size_t bytes);

// The driver's `name` (CUDA 12 ABI) through the runtime, which finds the driver the
// process loaded; null when it has none.
void* DriverEntry(const char* name);

}  // namespace ccltune::gpu

// TEST HELPER: device memory from CUDA's virtual memory API, shareable as a POSIX file
// descriptor, as PyTorch's expandable segments are when they may travel between processes:
// the direct exchange's descriptor path (runtime/direct/cuda_backend.h) needs such memory.
#pragma once

#include <cstddef>

namespace ccltune::testing {

// `bytes` (rounded up to the allocation granularity) on `device`, mapped read-write for it;
// null when the driver lacks the API or refuses.
void* VmmAllocate(int device, std::size_t bytes);
void VmmFree(void* ptr);

}  // namespace ccltune::testing

// Legacy-allocation test (direct_peer.h), through the driver's cuPointerGetAttributes: the
// runtime API cannot tell cudaMalloc memory from virtual-memory or pool memory.
#include "core/gpu/direct_peer.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace ccltune::gpu {
namespace {

using PointerGetAttributes = CUresult (*)(unsigned int, CUpointer_attribute*, void**, CUdeviceptr);

PointerGetAttributes Query() {
  static const PointerGetAttributes fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuPointerGetAttributes", &f, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      f = nullptr;
    }
    (void)cudaGetLastError();
    return reinterpret_cast<PointerGetAttributes>(f);
  }();
  return fn;
}

}  // namespace

bool InLegacyAllocation(const void* p, std::size_t bytes) {
  const PointerGetAttributes query = Query();
  if (query == nullptr || p == nullptr) return false;
  int legacy = 0;
  CUdeviceptr start = 0;
  std::size_t size = 0;
  CUpointer_attribute what[] = {CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
                                CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  void* into[] = {&legacy, &start, &size};
  const auto at = static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(p));
  if (query(3, what, into, at) != CUDA_SUCCESS) return false;
  return legacy != 0 && at >= start && bytes <= size && at - start <= size - bytes;
}

}  // namespace ccltune::gpu

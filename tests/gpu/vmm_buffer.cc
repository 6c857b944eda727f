// Virtual-memory test buffers (vmm_buffer.h), through the driver's entry points.
#include "tests/gpu/vmm_buffer.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>

#include "core/gpu/direct_peer.h"

namespace ccltune::testing {
namespace {

template <class F>
F Entry(const char* name) {
  return reinterpret_cast<F>(gpu::DriverEntry(name));
}

struct Mapping {
  std::size_t bytes;
  CUmemGenericAllocationHandle handle;
};
std::mutex mu;
std::map<std::uintptr_t, Mapping> mappings;

}  // namespace

void* VmmAllocate(int device, std::size_t bytes) {
  static const auto granularity =
      Entry<CUresult (*)(size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags)>(
          "cuMemGetAllocationGranularity");
  static const auto create =
      Entry<CUresult (*)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*,
                         unsigned long long)>("cuMemCreate");
  static const auto reserve =
      Entry<CUresult (*)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long)>(
          "cuMemAddressReserve");
  static const auto map = Entry<CUresult (*)(
      CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long)>("cuMemMap");
  static const auto access =
      Entry<CUresult (*)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t)>("cuMemSetAccess");
  if (!granularity || !create || !reserve || !map || !access) return nullptr;
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  std::size_t g = 0;
  if (granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS) return nullptr;
  bytes = (bytes + g - 1) / g * g;
  CUmemGenericAllocationHandle h = 0;
  CUdeviceptr va = 0;
  CUmemAccessDesc rw{};
  rw.location = prop.location;
  rw.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (create(&h, bytes, &prop, 0) != CUDA_SUCCESS) return nullptr;
  if (reserve(&va, bytes, g, 0, 0) != CUDA_SUCCESS || map(va, bytes, 0, h, 0) != CUDA_SUCCESS ||
      access(va, bytes, &rw, 1) != CUDA_SUCCESS) {
    return nullptr;  // a test's leak on a path that already failed it
  }
  std::lock_guard<std::mutex> lock(mu);
  mappings[static_cast<std::uintptr_t>(va)] = {bytes, h};
  return reinterpret_cast<void*>(va);
}

void VmmFree(void* ptr) {
  static const auto unmap = Entry<CUresult (*)(CUdeviceptr, size_t)>("cuMemUnmap");
  static const auto release = Entry<CUresult (*)(CUmemGenericAllocationHandle)>("cuMemRelease");
  static const auto free = Entry<CUresult (*)(CUdeviceptr, size_t)>("cuMemAddressFree");
  std::lock_guard<std::mutex> lock(mu);
  auto it = mappings.find(reinterpret_cast<std::uintptr_t>(ptr));
  if (it == mappings.end() || !unmap || !release || !free) return;
  const auto va = static_cast<CUdeviceptr>(it->first);
  (void)unmap(va, it->second.bytes);
  (void)release(it->second.handle);
  (void)free(va, it->second.bytes);
  mappings.erase(it);
}

}  // namespace ccltune::testing

// Reachability of a buffer from peer devices (direct_peer.h), through the driver: the
// runtime API cannot tell cudaMalloc memory from virtual-memory mappings, nor report a
// mapping's access.
#include "core/gpu/direct_peer.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace ccltune::gpu {
namespace {

using PointerGetAttributes = CUresult (*)(unsigned int, CUpointer_attribute*, void**, CUdeviceptr);
using MemGetAccess = CUresult (*)(unsigned long long*, const CUmemLocation*, CUdeviceptr);

PointerGetAttributes Attributes() {
  static const auto fn =
      reinterpret_cast<PointerGetAttributes>(DriverEntry("cuPointerGetAttributes"));
  return fn;
}

MemGetAccess Access() {
  static const auto fn = reinterpret_cast<MemGetAccess>(DriverEntry("cuMemGetAccess"));
  return fn;
}

bool ReadWrite(MemGetAccess access, CUdeviceptr at, int device) {
  CUmemLocation where{};
  where.type = CU_MEM_LOCATION_TYPE_DEVICE;
  where.id = device;
  unsigned long long flags = 0;
  return access(&flags, &where, at) == CUDA_SUCCESS && flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
}

}  // namespace

void* DriverEntry(const char* name) {
  void* f = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &f, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    f = nullptr;
  }
  (void)cudaGetLastError();
  return f;
}

std::optional<Allocation> AllocationOf(const void* p, std::size_t bytes) {
  const PointerGetAttributes query = Attributes();
  if (query == nullptr || p == nullptr || bytes == 0) return std::nullopt;
  int legacy = 0;
  CUdeviceptr start = 0;
  std::size_t size = 0;
  CUpointer_attribute what[] = {CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
                                CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  void* into[] = {&legacy, &start, &size};
  const auto at = static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(p));
  if (query(3, what, into, at) != CUDA_SUCCESS) return std::nullopt;
  if (at < start || bytes > size || at - start > size - bytes) return std::nullopt;
  return Allocation{static_cast<std::uintptr_t>(start), size, legacy != 0};
}

bool ReachableFrom(const void* p, std::size_t bytes, const std::vector<int>& devices) {
  const std::optional<Allocation> a = AllocationOf(p, bytes);
  if (!a) return false;
  if (a->legacy_ipc) return true;
  const MemGetAccess access = Access();
  if (access == nullptr) return false;
  const auto at = static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(p));
  for (int d : devices) {
    if (!ReadWrite(access, at, d) || !ReadWrite(access, at + bytes - 1, d)) return false;
  }
  return true;
}

}  // namespace ccltune::gpu

// CUDA's direct backend (cuda_backend.h).
#include "runtime/direct/cuda_backend.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstring>
#include <map>

#include "core/gpu/cuda_check.h"
#include "core/gpu/cuda_resources.h"
#include "core/gpu/direct_peer.h"
#include "core/kernels/peer_kernels.h"
#include "runtime/runtime_comm.h"

namespace ccltune::runtime::direct {
namespace {

static_assert(kMaxRanks == kernels::kMaxPeers);

template <class F>
F Driver(const char* name) {
  return reinterpret_cast<F>(gpu::DriverEntry(name));
}

struct DriverApi {
  using Retain = CUresult (*)(CUmemGenericAllocationHandle*, void*);
  using ExportFd = CUresult (*)(void*, CUmemGenericAllocationHandle, CUmemAllocationHandleType,
                                unsigned long long);
  using ImportFd = CUresult (*)(CUmemGenericAllocationHandle*, void*, CUmemAllocationHandleType);
  using Release = CUresult (*)(CUmemGenericAllocationHandle);
  using Reserve = CUresult (*)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long);
  using Map = CUresult (*)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                           unsigned long long);
  using SetAccess = CUresult (*)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t);
  using Unmap = CUresult (*)(CUdeviceptr, size_t);
  using Free = CUresult (*)(CUdeviceptr, size_t);
  Retain retain = Driver<Retain>("cuMemRetainAllocationHandle");
  ExportFd export_fd = Driver<ExportFd>("cuMemExportToShareableHandle");
  ImportFd import_fd = Driver<ImportFd>("cuMemImportFromShareableHandle");
  Release release = Driver<Release>("cuMemRelease");
  Reserve reserve = Driver<Reserve>("cuMemAddressReserve");
  Map map = Driver<Map>("cuMemMap");
  SetAccess set_access = Driver<SetAccess>("cuMemSetAccess");
  Unmap unmap = Driver<Unmap>("cuMemUnmap");
  Free free = Driver<Free>("cuMemAddressFree");
  bool vmm() const {
    return retain && export_fd && import_fd && release && reserve && map && set_access && unmap &&
           free;
  }
};

const DriverApi& Api() {
  static const DriverApi api;
  return api;
}

// Handles: "ipc" + cudaIpcMemHandle_t, or "vmm" + the allocation's size (its descriptor
// travels beside the message).
constexpr char kIpc[] = "ipc";
constexpr char kVmm[] = "vmm";

class CudaBackend : public DirectBackend {
 public:
  CudaBackend(int device, gpu::DeviceBuffer slots, gpu::Stream stream)
      : device_(device), slots_(std::move(slots)), stream_(std::move(stream)) {}
  ~CudaBackend() override {
    for (auto& [key, m] : maps_) Unmap(m);
  }

  core::Result<Exported> Export(const Segment& s) override;
  core::Result<std::uintptr_t> Open(int rank, std::uint64_t segment, const std::string& handle,
                                    int fd) override;
  void Close(int rank, std::uint64_t segment) override;
  core::Status Publish(int slot, const SlotTable& table) override;
  core::Status Withdraw(int slot) override;
  const void* SlotAddress(int slot) const override {
    return static_cast<const kernels::DirectSlot*>(slots_.data()) + slot;
  }

 private:
  struct Mapping {
    std::uintptr_t base = 0;
    std::size_t bytes = 0;
    bool vmm = false;
  };
  void Unmap(const Mapping& m);
  core::Result<std::uintptr_t> OpenVmm(const std::string& handle, int fd, Mapping* m);
  core::Status Write(void* to, const void* from, std::size_t bytes);

  int device_;
  gpu::DeviceBuffer slots_;
  gpu::Stream stream_;
  std::map<std::pair<int, std::uint64_t>, Mapping> maps_;
};

core::Result<Exported> CudaBackend::Export(const Segment& s) {
  DeviceGuard guard(device_);
  const DriverApi& api = Api();
  const std::optional<gpu::Allocation> a =
      gpu::AllocationOf(reinterpret_cast<const void*>(s.base), s.bytes);
  if (!a) return core::InvalidArgument("not device memory in one allocation");
  const CUdeviceptr start = static_cast<CUdeviceptr>(a->start);
  const std::size_t size = a->size;
  Exported e;
  e.allocation_base = a->start;
  if (a->legacy_ipc) {
    cudaIpcMemHandle_t h;
    CCLTUNE_CUDA_TRY(cudaIpcGetMemHandle(&h, reinterpret_cast<void*>(start)));
    e.handle = std::string(kIpc) + std::string(reinterpret_cast<const char*>(&h), sizeof h);
    return e;
  }
  if (!api.vmm()) return core::Unavailable("driver lacks the virtual memory API");
  CUmemGenericAllocationHandle h = 0;
  if (api.retain(&h, reinterpret_cast<void*>(start)) != CUDA_SUCCESS) {
    return core::InvalidArgument("not a virtual-memory allocation");
  }
  int fd = -1;
  const CUresult r = api.export_fd(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  api.release(h);
  if (r != CUDA_SUCCESS) return core::InvalidArgument("allocation not shareable as a descriptor");
  e.fd = core::UniqueFd(fd);
  e.handle = std::string(kVmm) + std::to_string(size);
  return e;
}

core::Result<std::uintptr_t> CudaBackend::OpenVmm(const std::string& handle, int fd, Mapping* m) {
  const DriverApi& api = Api();
  if (!api.vmm() || fd < 0) return core::InvalidArgument("no descriptor for a vmm handle");
  m->bytes = std::stoull(handle.substr(3));
  CUmemGenericAllocationHandle h = 0;
  if (api.import_fd(&h, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),
                    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != CUDA_SUCCESS) {
    return core::Unavailable("cuMemImportFromShareableHandle failed");
  }
  CUdeviceptr va = 0;
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device_;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  bool ok = api.reserve(&va, m->bytes, 0, 0, 0) == CUDA_SUCCESS;
  ok = ok && api.map(va, m->bytes, 0, h, 0) == CUDA_SUCCESS;
  ok = ok && api.set_access(va, m->bytes, &access, 1) == CUDA_SUCCESS;
  api.release(h);  // the mapping holds the allocation
  m->base = static_cast<std::uintptr_t>(va);
  m->vmm = true;
  if (!ok) {
    if (va != 0) Unmap(*m);
    return core::Unavailable("mapping a peer's virtual-memory allocation failed");
  }
  return m->base;
}

core::Result<std::uintptr_t> CudaBackend::Open(int rank, std::uint64_t segment,
                                               const std::string& handle, int fd) {
  DeviceGuard guard(device_);
  Mapping m;
  if (handle.rfind(kVmm, 0) == 0) {
    CCLTUNE_ASSIGN_OR_RETURN(m.base, OpenVmm(handle, fd, &m));
  } else if (handle.rfind(kIpc, 0) == 0 && handle.size() == 3 + sizeof(cudaIpcMemHandle_t)) {
    cudaIpcMemHandle_t h;
    std::memcpy(&h, handle.data() + 3, sizeof h);
    void* p = nullptr;
    CCLTUNE_CUDA_TRY(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess));
    m.base = reinterpret_cast<std::uintptr_t>(p);
  } else {
    return core::InvalidArgument("unknown handle kind");
  }
  maps_[{rank, segment}] = m;
  return m.base;
}

void CudaBackend::Unmap(const Mapping& m) {
  if (m.vmm) {
    (void)Api().unmap(static_cast<CUdeviceptr>(m.base), m.bytes);
    (void)Api().free(static_cast<CUdeviceptr>(m.base), m.bytes);
  } else {
    (void)cudaIpcCloseMemHandle(reinterpret_cast<void*>(m.base));
    (void)cudaGetLastError();
  }
}

void CudaBackend::Close(int rank, std::uint64_t segment) {
  auto it = maps_.find({rank, segment});
  if (it == maps_.end()) return;
  DeviceGuard guard(device_);
  Unmap(it->second);
  maps_.erase(it);
}

core::Status CudaBackend::Write(void* to, const void* from, std::size_t bytes) {
  CCLTUNE_CUDA_TRY(cudaMemcpyAsync(to, from, bytes, cudaMemcpyHostToDevice, stream_.get()));
  CCLTUNE_CUDA_TRY(cudaStreamSynchronize(stream_.get()));
  return core::Status::Ok();
}

// Entries, then (once they landed) the valid word: a launch that reads valid 1 (with
// acquire) reads these entries.
core::Status CudaBackend::Publish(int slot, const SlotTable& table) {
  DeviceGuard guard(device_);
  auto* at = static_cast<kernels::DirectSlot*>(slots_.data()) + slot;
  kernels::DirectSlot s{};
  for (int r = 0; r < kMaxRanks; ++r) {
    s.in[r] = reinterpret_cast<const void*>(table.in[r]);
    s.out[r] = reinterpret_cast<void*>(table.out[r]);
  }
  constexpr std::size_t kEntries = offsetof(kernels::DirectSlot, in);
  CCLTUNE_RETURN_IF_ERROR(Write(reinterpret_cast<char*>(at) + kEntries,
                                reinterpret_cast<const char*>(&s) + kEntries, sizeof s - kEntries));
  const unsigned int valid = 1;
  return Write(&at->valid, &valid, sizeof valid);
}

core::Status CudaBackend::Withdraw(int slot) {
  DeviceGuard guard(device_);
  auto* at = static_cast<kernels::DirectSlot*>(slots_.data()) + slot;
  const unsigned int valid = 0;
  return Write(&at->valid, &valid, sizeof valid);
}

}  // namespace

core::Result<std::unique_ptr<DirectBackend>> MakeCudaBackend(int device, int slots) {
  DeviceGuard guard(device);
  CCLTUNE_ASSIGN_OR_RETURN(
      gpu::DeviceBuffer buffer,
      gpu::DeviceBuffer::Allocate(sizeof(kernels::DirectSlot) * static_cast<std::size_t>(slots),
                                  gpu::MemoryKind::kCuda));
  CCLTUNE_CUDA_TRY(cudaMemset(buffer.data(), 0, buffer.bytes()));
  CCLTUNE_ASSIGN_OR_RETURN(gpu::Stream stream, gpu::Stream::Create());
  return std::unique_ptr<DirectBackend>(
      new CudaBackend(device, std::move(buffer), std::move(stream)));
}

}  // namespace ccltune::runtime::direct

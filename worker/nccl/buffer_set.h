// The buffers of one prepared choice: a send region and a receive region, each cut into
// `slices` equal, 4 KiB-aligned slices that successive launches rotate through, so that a
// message whose working set fits in L2 is not measured out of the cache. Registered with
// the communicator as the choice asks (ncclCommRegister, or symmetric windows); the
// registrations are released before the memory, and skipped when the communicator was
// aborted (its handles died with it).
#pragma once

#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/base/status.h"
#include "core/plan/types.h"
#include "worker/deadline.h"
#include "worker/nccl/choice_catalog.h"
#include "worker/nccl/communicator.h"
#include "worker/nccl/gpu_names.h"

namespace ccltune::worker::nccl {

struct BufferLayout {
  std::size_t send_bytes = 0;  // one slice's payload
  std::size_t recv_bytes = 0;
  std::size_t send_stride = 0;  // payload rounded up to 4 KiB
  std::size_t recv_stride = 0;
  int slices = 1;
};

// Slices so the rotation's footprint reaches twice the L2 size (at most kMaxSlices).
BufferLayout PlanLayout(std::size_t send_bytes, std::size_t recv_bytes, std::size_t l2_bytes);

// Copies slice 0 of a region of `slices` contiguous slices `stride` bytes apart onto all the
// others, in doubling spans: log2(slices) copies on `stream` where filling each slice took a
// launch per slice (up to 1024 at small sizes, more than the choice's timed rounds cost).
core::Status CopySliceZeroToAll(void* base, std::size_t stride, int slices, cudaStream_t stream);

class Registration {
 public:
  Registration(std::shared_ptr<Communicator> comm, void* handle, ncclWindow_t window)
      : comm_(std::move(comm)), handle_(handle), window_(window) {}
  ~Registration();
  Registration(const Registration&) = delete;
  Registration& operator=(const Registration&) = delete;

 private:
  std::shared_ptr<Communicator> comm_;
  void* handle_;
  ncclWindow_t window_;
};

class BufferSet {
 public:
  // Collective when mode is kSymmetric (every rank registers its window together).
  static core::Result<std::unique_ptr<BufferSet>> Create(const BufferLayout& layout,
                                                         BufferMode mode,
                                                         std::shared_ptr<Communicator> comm,
                                                         Deadline deadline,
                                                         const CancelToken& cancel);
  // Ordinary device memory (cudaMalloc), registered with nothing: what a program passes.
  static core::Result<std::unique_ptr<BufferSet>> CreatePlain(const BufferLayout& layout);
  // Carved from the peer memory's data region at the same offsets on every rank, with
  // `staging_bytes` of staging after the slices. Collective when the region grows.
  static core::Result<std::unique_ptr<BufferSet>> CreateOnPeers(const BufferLayout& layout,
                                                                std::size_t staging_bytes,
                                                                PeerMemory& peers,
                                                                Deadline deadline);
  ~BufferSet();

  void* send(int slice) const;
  void* recv(int slice) const;
  const BufferLayout& layout() const { return layout_; }
  // Every rank's buffers of `slice` as mapped here, and our own staging (CreateOnPeers only).
  kernels::PeerOperands Operands(int slice) const;
  void* staging() const;

 private:
  BufferSet() = default;
  static core::Result<std::unique_ptr<BufferSet>> Allocate(const BufferLayout& layout,
                                                           MemoryKind kind);
  core::Status Register(BufferMode mode, Deadline deadline, const CancelToken& cancel);

  BufferLayout layout_;
  std::shared_ptr<Communicator> comm_;
  char* send_base_ = nullptr;
  char* recv_base_ = nullptr;
  const PeerMemory* peers_ = nullptr;
  std::size_t recv_offset_ = 0;  // in the peer data region (send slices start at 0)
  std::size_t staging_offset_ = 0;
  DeviceBuffer send_;
  DeviceBuffer recv_;
  void* handles_[2] = {nullptr, nullptr};
  ncclWindow_t windows_[2] = {nullptr, nullptr};
  std::vector<std::unique_ptr<Registration>> registrations_;
};

}  // namespace ccltune::worker::nccl

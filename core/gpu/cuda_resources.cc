// RAII CUDA objects (cuda_resources.h).
#include "core/gpu/cuda_resources.h"

#include <nccl.h>

#include <chrono>
#include <string>
#include <thread>

#include "core/gpu/cuda_check.h"
#include "core/gpu/nccl_api.h"

namespace ccltune::gpu {

core::Status WaitStreamIdle(cudaStream_t stream, core::Deadline deadline, const char* what) {
  for (;;) {
    const cudaError_t q = cudaStreamQuery(stream);
    if (q == cudaSuccess) return core::Status::Ok();
    if (q != cudaErrorNotReady) return CudaError(q, what, __FILE__, __LINE__);
    if (core::Expired(deadline))
      return core::TimeoutError(std::string(what) + ": GPU did not finish");
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

core::Result<DeviceBuffer> DeviceBuffer::Allocate(std::size_t bytes, MemoryKind kind) {
  DeviceBuffer b;
  b.kind_ = kind;
  b.bytes_ = bytes;
  if (bytes == 0) return b;
  if (kind == MemoryKind::kNccl) {
    CCLTUNE_NCCL_TRY(nullptr, Nccl().MemAlloc(&b.ptr_, bytes));
  } else {
    CCLTUNE_CUDA_TRY(cudaMalloc(&b.ptr_, bytes));
  }
  return b;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    Reset();
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    kind_ = o.kind_;
  }
  return *this;
}

void DeviceBuffer::Reset() {
  if (ptr_ == nullptr) return;
  if (kind_ == MemoryKind::kNccl) {
    (void)Nccl().MemFree(ptr_);
  } else {
    (void)cudaFree(ptr_);
  }
  ptr_ = nullptr;
  bytes_ = 0;
}

core::Result<MappedHost> MappedHost::Allocate(std::size_t bytes) {
  MappedHost m;
  CCLTUNE_CUDA_TRY(cudaHostAlloc(&m.host_, bytes, cudaHostAllocMapped));
  CCLTUNE_CUDA_TRY(cudaHostGetDevicePointer(&m.device_, m.host_, 0));
  return m;
}

MappedHost& MappedHost::operator=(MappedHost&& o) noexcept {
  if (this != &o) {
    if (host_ != nullptr) (void)cudaFreeHost(host_);
    host_ = std::exchange(o.host_, nullptr);
    device_ = std::exchange(o.device_, nullptr);
  }
  return *this;
}

MappedHost::~MappedHost() {
  if (host_ != nullptr) (void)cudaFreeHost(host_);
}

core::Result<Stream> Stream::Create() {
  Stream s;
  CCLTUNE_CUDA_TRY(cudaStreamCreateWithFlags(&s.s_, cudaStreamNonBlocking));
  return s;
}

Stream& Stream::operator=(Stream&& o) noexcept {
  if (this != &o) {
    if (s_ != nullptr) (void)cudaStreamDestroy(s_);
    s_ = std::exchange(o.s_, nullptr);
  }
  return *this;
}

Stream::~Stream() {
  if (s_ != nullptr) (void)cudaStreamDestroy(s_);
}

core::Result<Event> Event::Create() {
  Event e;
  CCLTUNE_CUDA_TRY(cudaEventCreate(&e.e_));
  return e;
}

core::Result<Event> Event::CreateForOrdering() {
  Event e;
  CCLTUNE_CUDA_TRY(cudaEventCreateWithFlags(&e.e_, cudaEventDisableTiming));
  return e;
}

Event& Event::operator=(Event&& o) noexcept {
  if (this != &o) {
    if (e_ != nullptr) (void)cudaEventDestroy(e_);
    e_ = std::exchange(o.e_, nullptr);
  }
  return *this;
}

Event::~Event() {
  if (e_ != nullptr) (void)cudaEventDestroy(e_);
}

GraphExec& GraphExec::operator=(GraphExec&& o) noexcept {
  if (this != &o) {
    if (g_ != nullptr) (void)cudaGraphExecDestroy(g_);
    g_ = std::exchange(o.g_, nullptr);
  }
  return *this;
}

Capture CaptureOf(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    (void)cudaGetLastError();
    return Capture::kUnknown;
  }
  return status == cudaStreamCaptureStatusNone ? Capture::kNo : Capture::kYes;
}

GraphExec::~GraphExec() {
  if (g_ != nullptr) (void)cudaGraphExecDestroy(g_);
}

}  // namespace ccltune::gpu

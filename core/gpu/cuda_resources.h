// RAII owners of the CUDA objects a backend holds: device buffers (cudaMalloc or
// ncclMemAlloc), host-mapped pinned memory, streams, events and instantiated graphs.
// Move-only; destruction never throws and never waits on a deadline-less operation other
// than what the CUDA call itself does (so callers abort hung kernels first).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "core/base/deadline.h"
#include "core/base/status.h"

namespace ccltune::gpu {

// Polls `stream` until its work is done (50 µs apart): Timeout naming `what` at `deadline`,
// or the CUDA error the stream reported.
core::Status WaitStreamIdle(cudaStream_t stream, core::Deadline deadline, const char* what);

// Whether `stream` is being captured into a CUDA graph; kUnknown when the query failed (the
// legacy stream while another stream captures in global mode, say). The failed query's error
// is cleared: it is not the caller's to meet later in cudaGetLastError.
enum class Capture { kNo, kYes, kUnknown };
Capture CaptureOf(cudaStream_t stream);

enum class MemoryKind {
  kCuda,  // cudaMalloc
  kNccl,  // ncclMemAlloc: cuMem-backed, required for registration and symmetric windows
};

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  static core::Result<DeviceBuffer> Allocate(std::size_t bytes, MemoryKind kind);
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  ~DeviceBuffer() { Reset(); }

  void* data() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  void Reset();

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  MemoryKind kind_ = MemoryKind::kCuda;
};

// Pinned host memory mapped into the device address space: kernels write, the host reads
// after the stream finished, without a copy.
class MappedHost {
 public:
  MappedHost() = default;
  static core::Result<MappedHost> Allocate(std::size_t bytes);
  MappedHost(MappedHost&& o) noexcept { *this = std::move(o); }
  MappedHost& operator=(MappedHost&& o) noexcept;
  ~MappedHost();

  void* host() const { return host_; }
  void* device() const { return device_; }

 private:
  void* host_ = nullptr;
  void* device_ = nullptr;
};

class Stream {
 public:
  Stream() = default;
  static core::Result<Stream> Create();
  Stream(Stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Stream& operator=(Stream&& o) noexcept;
  ~Stream();
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event() = default;
  static core::Result<Event> Create();             // with timing
  static core::Result<Event> CreateForOrdering();  // no timing: fork/join between streams
  Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  Event& operator=(Event&& o) noexcept;
  ~Event();
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

class GraphExec {
 public:
  GraphExec() = default;
  explicit GraphExec(cudaGraphExec_t g) : g_(g) {}
  GraphExec(GraphExec&& o) noexcept : g_(std::exchange(o.g_, nullptr)) {}
  GraphExec& operator=(GraphExec&& o) noexcept;
  ~GraphExec();
  cudaGraphExec_t get() const { return g_; }
  explicit operator bool() const { return g_ != nullptr; }

 private:
  cudaGraphExec_t g_ = nullptr;
};

}  // namespace ccltune::gpu

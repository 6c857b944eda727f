// TEST HELPER: what the one-GPU kernel tests share, where `world` ranks are simulated on one
// device (each with its own buffers and non-blocking stream, peers reached by plain device
// pointers): whether a GPU is there (and a test base that skips without one), owned device,
// mapped-host and stream handles, a simulated rank's team, and the first difference between
// two device buffers.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/kernels/kernels.h"
#include "core/kernels/peer_kernels.h"
#include "core/plan/types.h"

// A CUDA call in a test body that must succeed, naming the call where it did not.
#define CUDA_ASSERT(expr) ASSERT_EQ(cudaSuccess, (expr)) << #expr

namespace ccltune::testing {

// Empty when a CUDA device is usable, else why not (the tests skip with it).
inline std::string GpuMissing() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return cudaGetErrorString(e);
  }
  return n == 0 ? "no CUDA device" : "";
}

// A parameterised test that skips, saying why, where no GPU is usable.
template <class Param>
class GpuParamTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    const std::string missing = GpuMissing();
    if (!missing.empty()) GTEST_SKIP() << "needs a GPU: " << missing;
  }
};

struct CudaFree {
  void operator()(void* p) const { (void)cudaFree(p); }
};
struct HostFree {
  void operator()(void* p) const { (void)cudaFreeHost(p); }
};
using DeviceMem = std::unique_ptr<void, CudaFree>;
using HostMem = std::unique_ptr<void, HostFree>;

// Zeroed device memory (null on failure).
inline DeviceMem Zeroed(std::uint64_t bytes) {
  void* p = nullptr;
  if (bytes == 0 || cudaMalloc(&p, bytes) != cudaSuccess) return nullptr;
  DeviceMem m(p);
  return cudaMemset(p, 0, bytes) == cudaSuccess ? std::move(m) : nullptr;
}

// Zeroed host memory the device reaches directly (UVA: the same pointer on both sides).
inline HostMem Mapped(std::uint64_t bytes) {
  void* p = nullptr;
  if (cudaHostAlloc(&p, bytes, cudaHostAllocMapped) != cudaSuccess) return nullptr;
  std::memset(p, 0, bytes);
  return HostMem(p);
}

struct StreamDestroy {
  void operator()(cudaStream_t s) const { (void)cudaStreamDestroy(s); }
};
using Stream = std::unique_ptr<CUstream_st, StreamDestroy>;

// A non-blocking stream (null on failure).
inline Stream NonBlockingStream() {
  cudaStream_t s = nullptr;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return nullptr;
  return Stream(s);
}

// Rank r's team over simulated ranks, each with its own `signals`, `epochs` (device) and
// `timed_out` (mapped host) memory; waits bounded by `bound_ns`.
template <class Rank>
kernels::PeerTeam SimTeam(const std::vector<Rank>& ranks, int r, unsigned long long bound_ns) {
  kernels::PeerTeam t;
  t.rank = r;
  t.world = static_cast<int>(ranks.size());
  for (int q = 0; q < t.world; ++q) {
    t.signals[q] = static_cast<kernels::PeerSignals*>(ranks[q].signals.get());
  }
  t.epochs = static_cast<unsigned int*>(ranks[r].epochs.get());
  t.timed_out = static_cast<int*>(ranks[r].timed_out.get());
  t.timeout_ns = bound_ns;
  return t;
}

// Empty when `got` matches `want` within `tol` (LaunchCompare), else where and how it first
// differs: "row R col C" for rows of `row_len` elements, "element I" when row_len is 0.
inline std::string Differs(const void* got, const void* want, std::uint64_t n, core::Dtype dtype,
                           double tol, int row_len = 0) {
  HostMem m = Mapped(sizeof(kernels::Mismatch));
  if (!m) return "cannot allocate the mismatch record";
  auto* mm = static_cast<kernels::Mismatch*>(m.get());
  cudaError_t e = kernels::LaunchCompare(got, want, n, dtype, tol, mm, nullptr);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) return std::string("compare: ") + cudaGetErrorString(e);
  if (mm->index == ~0ull) return "";
  const std::string where = row_len > 0 ? "row " + std::to_string(mm->index / row_len) + " col " +
                                              std::to_string(mm->index % row_len)
                                        : "element " + std::to_string(mm->index);
  return where + ": got " + std::to_string(mm->got) + ", want " + std::to_string(mm->want);
}

}  // namespace ccltune::testing

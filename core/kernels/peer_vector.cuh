// Element access for the peer kernels: 16-byte vectors unpacked to fp32 (the kernels
// accumulate in fp32 whatever the element type), the reduction operators, and the one
// index walk that both the writer and the reader of a staging slot use, so block b of
// every rank touches the same elements.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "core/plan/types.h"

namespace ccltune::kernels {

template <class T>
struct Lanes {
  static constexpr int kN = 16 / sizeof(T);
};

template <class T>
__device__ inline float ToF(T v);
template <>
__device__ inline float ToF<float>(float v) {
  return v;
}
template <>
__device__ inline float ToF<__half>(__half v) {
  return __half2float(v);
}
template <>
__device__ inline float ToF<__nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <class T>
__device__ inline T FromF(float v);
template <>
__device__ inline float FromF<float>(float v) {
  return v;
}
template <>
__device__ inline __half FromF<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ inline __nv_bfloat16 FromF<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

template <class T>
__device__ inline void Unpack(const uint4& v, float* f) {
  const T* e = reinterpret_cast<const T*>(&v);
#pragma unroll
  for (int i = 0; i < Lanes<T>::kN; ++i) f[i] = ToF<T>(e[i]);
}

template <class T>
__device__ inline uint4 Pack(const float* f) {
  uint4 v;
  T* e = reinterpret_cast<T*>(&v);
#pragma unroll
  for (int i = 0; i < Lanes<T>::kN; ++i) e[i] = FromF<T>(f[i]);
  return v;
}

// 8 bytes (one LL line's data) as fp32.
template <class T>
__device__ inline void Unpack8(const uint2& v, float* f) {
  const T* e = reinterpret_cast<const T*>(&v);
#pragma unroll
  for (int i = 0; i < static_cast<int>(8 / sizeof(T)); ++i) f[i] = ToF<T>(e[i]);
}

template <core::RedOp OP>
__device__ inline float Combine(float a, float b) {
  if constexpr (OP == core::RedOp::kMax) return fmaxf(a, b);
  if constexpr (OP == core::RedOp::kMin) return fminf(a, b);
  return a + b;
}

// The flat thread index and stride of the grid.
__device__ inline std::uint64_t FlatThread() {
  return static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline std::uint64_t FlatStride() {
  return static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
}

// Indices first, first + stride, ... below n, U per step: `load(u, j)` runs for all U
// before any `use(u, j)`, so U loads per thread are in flight at once. A peer's memory is
// ~1 us away over NVLink; bytes in flight per thread, not occupancy, fill the links at
// the sizes where the grid covers the message in a few steps. The thread still visits
// exactly the indices it would visit one at a time.
template <int U, class FL, class FU>
__device__ inline void StridedSteps(std::uint64_t first, std::uint64_t n, std::uint64_t stride,
                                    FL&& load, FU&& use) {
  std::uint64_t j = first;
  for (; j + (U - 1) * stride < n; j += U * stride) {
#pragma unroll
    for (int u = 0; u < U; ++u) load(u, j + u * stride);
#pragma unroll
    for (int u = 0; u < U; ++u) use(u, j + u * stride);
  }
  for (; j < n; j += stride) {
    load(0, j);
    use(0, j);
  }
}

// Visits [0, len) elements: 16-byte vectors first (when VEC; `load`/`use` as in
// StridedSteps, with element offsets), then single elements; the same thread visits the
// same indices in every kernel of a launch shape, whatever U.
template <class T, bool VEC, int U, class FL, class FU, class FS>
__device__ inline void WalkRange(std::uint64_t len, FL&& load, FU&& use, FS&& scalar) {
  constexpr int kN = Lanes<T>::kN;
  std::uint64_t nvec = 0;
  const std::uint64_t tid = FlatThread(), stride = FlatStride();
  if constexpr (VEC) {
    nvec = len / kN;
    StridedSteps<U>(
        tid, nvec, stride, [&](int u, std::uint64_t j) { load(u, j * kN); },
        [&](int u, std::uint64_t j) { use(u, j * kN); });
  }
  for (std::uint64_t j = nvec * kN + tid; j < len; j += stride) scalar(j);
}

}  // namespace ccltune::kernels

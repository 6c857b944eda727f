// Device-side element helpers shared by the fill, expected and compare kernels: the
// counter-based value generator and conversions between each element type and double.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "core/plan/types.h"

namespace ccltune::kernels {

// splitmix64: a bijective mix, so neighbouring (rank, index) pairs get unrelated values.
__host__ __device__ inline std::uint64_t Mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__device__ inline std::uint64_t ElementHash(int rank, std::uint64_t generation,
                                            std::uint64_t index) {
  return Mix64(Mix64(generation * 0x100000001b3ull + static_cast<std::uint64_t>(rank)) ^ index);
}

template <class T>
struct Element;

template <>
struct Element<float> {
  __device__ static float FromDouble(double v) { return static_cast<float>(v); }
  __device__ static double ToDouble(float v) { return v; }
};
template <>
struct Element<__half> {
  __device__ static __half FromDouble(double v) { return __double2half(v); }
  __device__ static double ToDouble(__half v) { return __half2float(v); }
};
template <>
struct Element<__nv_bfloat16> {
  __device__ static __nv_bfloat16 FromDouble(double v) { return __double2bfloat16(v); }
  __device__ static double ToDouble(__nv_bfloat16 v) { return __bfloat162float(v); }
};
template <>
struct Element<std::int32_t> {
  // Integer results wrap like NCCL's integer arithmetic does.
  __device__ static std::int32_t FromDouble(double v) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<long long>(v)));
  }
  __device__ static double ToDouble(std::int32_t v) { return v; }
};
template <>
struct Element<std::int8_t> {
  __device__ static std::int8_t FromDouble(double v) {
    return static_cast<std::int8_t>(static_cast<std::uint8_t>(static_cast<long long>(v)));
  }
  __device__ static double ToDouble(std::int8_t v) { return v; }
};

// The input value of (rank, generation, index), already rounded to T.
template <class T>
__device__ inline T InputValue(int rank, std::uint64_t generation, std::uint64_t index) {
  const std::uint64_t h = ElementHash(rank, generation, index);
  if constexpr (std::is_same_v<T, std::int32_t>) {
    return static_cast<std::int32_t>(1 + h % 100);
  } else if constexpr (std::is_same_v<T, std::int8_t>) {
    return static_cast<std::int8_t>(1 + h % 3);
  } else {
    const double u = static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);  // [0,1)
    return Element<T>::FromDouble(0.5 + u);
  }
}

template <class T>
struct TypeTag {
  using type = T;
};

// Calls f(TypeTag<T>{}) with T the element type of `dtype` (C++17: nvcc under CMake 3.25
// builds CUDA as C++17, so no templated lambdas here).
template <class F>
inline auto DispatchDtype(core::Dtype dtype, F&& f) {
  switch (dtype) {
    case core::Dtype::kFp16:
      return f(TypeTag<__half>{});
    case core::Dtype::kBf16:
      return f(TypeTag<__nv_bfloat16>{});
    case core::Dtype::kInt32:
      return f(TypeTag<std::int32_t>{});
    case core::Dtype::kInt8:
      return f(TypeTag<std::int8_t>{});
    case core::Dtype::kFp32:
    default:
      return f(TypeTag<float>{});
  }
}

inline unsigned GridFor(std::uint64_t n, unsigned block) {
  const std::uint64_t blocks = (n + block - 1) / block;
  return static_cast<unsigned>(blocks < 65535ull * 8 ? (blocks ? blocks : 1) : 65535ull * 8);
}

}  // namespace ccltune::kernels

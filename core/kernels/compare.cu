// Tolerance check on the GPU (kernels.h): the first mismatching element wins an atomicMin,
// then one thread converts that element pair to double for the message.
#include <cmath>

#include "core/kernels/element.cuh"
#include "core/kernels/kernels.h"

namespace ccltune::kernels {
namespace {

constexpr unsigned kBlock = 256;

template <class T>
__global__ void FindMismatchKernel(const T* got, const T* want, std::uint64_t count, double rel_tol,
                                   unsigned long long* first) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
    const double g = Element<T>::ToDouble(got[i]);
    const double w = Element<T>::ToDouble(want[i]);
    const bool bad = !(fabs(g - w) <= rel_tol * fabs(w));  // NaN compares false: bad
    if (bad) {
      atomicMin(first, static_cast<unsigned long long>(i));
      return;  // later elements of this thread cannot be smaller
    }
  }
}

template <class T>
__global__ void ReportMismatchKernel(const T* got, const T* want, Mismatch* out) {
  const unsigned long long i = out->index;
  if (i == ~0ull) return;
  out->got = Element<T>::ToDouble(got[i]);
  out->want = Element<T>::ToDouble(want[i]);
}

__global__ void ResetKernel(Mismatch* out) {
  out->index = ~0ull;
  out->got = 0;
  out->want = 0;
}

}  // namespace

cudaError_t LaunchCompare(const void* got, const void* want, std::uint64_t count, core::Dtype dtype,
                          double rel_tol, Mismatch* result, cudaStream_t stream) {
  ResetKernel<<<1, 1, 0, stream>>>(result);
  if (count == 0) return cudaGetLastError();
  return DispatchDtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* g = static_cast<const T*>(got);
    const T* w = static_cast<const T*>(want);
    FindMismatchKernel<T>
        <<<GridFor(count, kBlock), kBlock, 0, stream>>>(g, w, count, rel_tol, &result->index);
    ReportMismatchKernel<T><<<1, 1, 0, stream>>>(g, w, result);
    return cudaGetLastError();
  });
}

}  // namespace ccltune::kernels

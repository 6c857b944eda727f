// Pseudo-random inputs and the expected result of each collective on them (kernels.h).
#include <type_traits>

#include "core/kernels/element.cuh"
#include "core/kernels/kernels.h"

namespace ccltune::kernels {
namespace {

constexpr unsigned kBlock = 256;

template <class T>
__global__ void FillKernel(T* dst, std::uint64_t count, int rank, std::uint64_t generation,
                           std::uint64_t first_index) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
    dst[i] = InputValue<T>(rank, generation, first_index + i);
  }
}

__device__ inline double Combine(core::RedOp op, double a, double b) {
  switch (op) {
    case core::RedOp::kMax:
      return a > b ? a : b;
    case core::RedOp::kMin:
      return a < b ? a : b;
    case core::RedOp::kProd:
      return a * b;
    default:
      return a + b;
  }
}

__device__ inline long long CombineInt(core::RedOp op, long long a, long long b) {
  // Unsigned arithmetic wraps exactly like NCCL's integer sum and product.
  switch (op) {
    case core::RedOp::kMax:
      return a > b ? a : b;
    case core::RedOp::kMin:
      return a < b ? a : b;
    case core::RedOp::kProd:
      return static_cast<long long>(static_cast<unsigned long long>(a) *
                                    static_cast<unsigned long long>(b));
    default:
      return static_cast<long long>(static_cast<unsigned long long>(a) +
                                    static_cast<unsigned long long>(b));
  }
}

// Reduction of every rank's input at `index`, in rank order, rounded once to T. Integers
// are reduced in 64-bit integers (a double would round large products). Avg is the sum
// over world: for integers the sum wrapped to T, then divided with truncation, as NCCL's
// ncclAvg does.
template <class T>
__device__ T ReduceAt(core::RedOp op, int world, std::uint64_t generation, std::uint64_t index) {
  const bool avg = op == core::RedOp::kAvg;
  if constexpr (std::is_integral_v<T>) {
    long long acc = InputValue<T>(0, generation, index);
    for (int p = 1; p < world; ++p) acc = CombineInt(op, acc, InputValue<T>(p, generation, index));
    const T wrapped = static_cast<T>(static_cast<unsigned long long>(acc));
    return avg ? static_cast<T>(wrapped / world) : wrapped;
  }
  double acc = Element<T>::ToDouble(InputValue<T>(0, generation, index));
  for (int p = 1; p < world; ++p) {
    acc = Combine(op, acc, Element<T>::ToDouble(InputValue<T>(p, generation, index)));
  }
  return Element<T>::FromDouble(avg ? acc / world : acc);
}

template <class T>
__global__ void ExpectedKernel(T* dst, core::Op op, core::RedOp redop, std::uint64_t count,
                               std::uint64_t n_out, int world, int rank, std::uint64_t generation) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t j = blockIdx.x * blockDim.x + threadIdx.x; j < n_out; j += stride) {
    const int peer = static_cast<int>(j / (count ? count : 1));
    const std::uint64_t in_block = j % (count ? count : 1);
    switch (op) {
      case core::Op::kAllReduce:
        dst[j] = ReduceAt<T>(redop, world, generation, j);
        break;
      case core::Op::kReduceScatter:
        dst[j] = ReduceAt<T>(redop, world, generation, rank * count + j);
        break;
      case core::Op::kBroadcast:
        dst[j] = InputValue<T>(0, generation, j);
        break;
      case core::Op::kAllGather:
        dst[j] = InputValue<T>(peer, generation, in_block);
        break;
      case core::Op::kAllToAll:
        dst[j] = InputValue<T>(peer, generation, rank * count + in_block);
        break;
    }
  }
}

}  // namespace

std::uint64_t SendElements(core::Op op, std::uint64_t count, int world) {
  const bool per_peer = op == core::Op::kReduceScatter || op == core::Op::kAllToAll;
  return per_peer ? count * static_cast<std::uint64_t>(world) : count;
}

std::uint64_t RecvElements(core::Op op, std::uint64_t count, int world) {
  const bool gathers = op == core::Op::kAllGather || op == core::Op::kAllToAll;
  return gathers ? count * static_cast<std::uint64_t>(world) : count;
}

cudaError_t LaunchRandomFill(void* dst, std::uint64_t count, core::Dtype dtype, int rank,
                             std::uint64_t generation, std::uint64_t first_index,
                             cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  return DispatchDtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    FillKernel<T><<<GridFor(count, kBlock), kBlock, 0, stream>>>(static_cast<T*>(dst), count, rank,
                                                                 generation, first_index);
    return cudaGetLastError();
  });
}

cudaError_t LaunchExpected(void* dst, core::Op op, core::RedOp redop, core::Dtype dtype,
                           std::uint64_t count, int world, int rank, std::uint64_t generation,
                           cudaStream_t stream) {
  const std::uint64_t n_out = RecvElements(op, count, world);
  if (n_out == 0) return cudaSuccess;
  return DispatchDtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    ExpectedKernel<T><<<GridFor(n_out, kBlock), kBlock, 0, stream>>>(
        static_cast<T*>(dst), op, redop, count, n_out, world, rank, generation);
    return cudaGetLastError();
  });
}

}  // namespace ccltune::kernels

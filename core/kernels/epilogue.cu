// The separate epilogue after an all-reduce (LaunchEpilogue) and the independent reference
// of every epilogue (LaunchEpilogueExpected), epilogue_kernels.h.
#include <cmath>

#include "core/kernels/element.cuh"
#include "core/kernels/epilogue_kernels.h"
#include "core/kernels/epilogue_row.cuh"
#include "core/kernels/peer_launch.cuh"

namespace ccltune::kernels {
namespace {

constexpr unsigned kMaxRowBlocks = 65535;
constexpr unsigned kExpectedBlock = 64;

// A block per row, rows strided over the grid. No __restrict__: `out` may alias `reduced`
// (each thread reads its vectors of a row before it writes them).
template <class T, EpilogueOp OP>
__global__ void __launch_bounds__(kMaxReduceThreads)
    EpilogueKernel(EpilogueParams p, const T* reduced, T* residual, T* out, std::uint64_t tokens) {
  __shared__ float scratch[32];
  const int nvec = p.hidden / Lanes<T>::kN;
  for (std::uint64_t row = blockIdx.x; row < tokens; row += gridDim.x) {
    const std::uint64_t at = row * static_cast<std::uint64_t>(p.hidden);
    const uint4* src = reinterpret_cast<const uint4*>(reduced + at);
    RowRegs<T> r;
    ForRowVectors<T>(nvec, [&](int v, int j) { Unpack<T>(src[j], r.x[v]); });
    RowTargets<T> to{};
    to.n = 1;
    to.out[0] = out + at;
    if constexpr (OP == EpilogueOp::kResidualRmsNorm) {
      to.residual_in = residual + at;
      to.residual[0] = residual + at;
    }
    FinishRow<T, OP>(p, r, nvec, to, scratch);
  }
}

// Two vectors per thread keep loads in flight; 512 threads hold the widest row.
int EpilogueThreads(int hidden, int lanes) {
  const int half = (hidden / lanes + 1) / 2;
  const int threads = (half + 31) / 32 * 32;
  return threads < 64 ? 64 : threads > kMaxReduceThreads ? kMaxReduceThreads : threads;
}

template <class T>
cudaError_t LaunchEpilogueTyped(const EpilogueParams& p, const void* reduced, void* residual,
                                void* out, std::uint64_t tokens, cudaStream_t stream) {
  const unsigned grid = tokens < kMaxRowBlocks ? static_cast<unsigned>(tokens) : kMaxRowBlocks;
  const int threads = EpilogueThreads(p.hidden, Lanes<T>::kN);
  const T* in = static_cast<const T*>(reduced);
  T* res = static_cast<T*>(residual);
  T* o = static_cast<T*>(out);
  if (p.op == EpilogueOp::kBias) {
    EpilogueKernel<T, EpilogueOp::kBias><<<grid, threads, 0, stream>>>(p, in, res, o, tokens);
  } else {
    EpilogueKernel<T, EpilogueOp::kResidualRmsNorm>
        <<<grid, threads, 0, stream>>>(p, in, res, o, tokens);
  }
  return cudaGetLastError();
}

// The reference, one thread per row, in double from the rounded inputs. The residual add
// is recomputed in the second pass instead of read back: the norm uses it unrounded.
template <class T>
__global__ void EpilogueExpectedKernel(EpilogueParams p, T* out_want, T* residual_want,
                                       std::uint64_t tokens, int world, std::uint64_t generation) {
  const std::uint64_t row = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= tokens) return;
  auto value = [&](int rank, std::uint64_t index) {
    return Element<T>::ToDouble(InputValue<T>(rank, generation, index));
  };
  const bool norm = p.op == EpilogueOp::kResidualRmsNorm;
  auto added = [&](std::uint64_t index) {  // the sum in rank order, plus the residual
    double sum = value(0, index);
    for (int r = 1; r < world; ++r) sum += value(r, index);
    return norm ? value(kResidualFillRank, index) + sum : sum;
  };
  const std::uint64_t at = row * static_cast<std::uint64_t>(p.hidden);
  double squares = 0;
  if (norm) {
    for (int c = 0; c < p.hidden; ++c) {
      const double x = added(at + c);
      residual_want[at + c] = Element<T>::FromDouble(x);
      squares += x * x;
    }
  }
  const double scale = norm ? 1.0 / sqrt(squares / p.hidden + static_cast<double>(p.eps)) : 1.0;
  for (int c = 0; c < p.hidden; ++c) {
    const double w = value(kWeightFillRank, c);
    const double x = added(at + c);
    out_want[at + c] = Element<T>::FromDouble(norm ? x * scale * w : x + w);
  }
}

bool EpilogueOperandsOk(const EpilogueParams& p, const void* reduced, const void* residual,
                        const void* out) {
  const bool norm = p.op == EpilogueOp::kResidualRmsNorm;
  return reduced != nullptr && out != nullptr && p.weight != nullptr &&
         (!norm || residual != nullptr);
}

bool EpilogueAligned(const EpilogueParams& p, const void* reduced, const void* residual,
                     const void* out) {
  const bool norm = p.op == EpilogueOp::kResidualRmsNorm;
  return Aligned16(reduced) && Aligned16(out) && Aligned16(p.weight) &&
         (!norm || Aligned16(residual));
}

}  // namespace

cudaError_t LaunchEpilogue(const EpilogueParams& p, const void* reduced, void* residual, void* out,
                           std::uint64_t tokens, core::Dtype dtype, cudaStream_t stream) {
  if (!EpilogueHiddenOk(p.hidden) || !core::IsFloat(dtype) ||
      !EpilogueOperandsOk(p, reduced, residual, out)) {
    return cudaErrorInvalidValue;
  }
  if (!EpilogueAligned(p, reduced, residual, out)) return cudaErrorMisalignedAddress;
  if (tokens == 0) return cudaSuccess;
  switch (dtype) {
    case core::Dtype::kFp32:
      return LaunchEpilogueTyped<float>(p, reduced, residual, out, tokens, stream);
    case core::Dtype::kFp16:
      return LaunchEpilogueTyped<__half>(p, reduced, residual, out, tokens, stream);
    default:
      return LaunchEpilogueTyped<__nv_bfloat16>(p, reduced, residual, out, tokens, stream);
  }
}

cudaError_t LaunchEpilogueExpected(const EpilogueParams& p, void* out_want, void* residual_want,
                                   std::uint64_t tokens, int world, std::uint64_t generation,
                                   core::Dtype dtype, cudaStream_t stream) {
  const bool norm = p.op == EpilogueOp::kResidualRmsNorm;
  if (!EpilogueHiddenOk(p.hidden) || !core::IsFloat(dtype) || world < 1 || out_want == nullptr ||
      (norm && residual_want == nullptr)) {
    return cudaErrorInvalidValue;
  }
  if (tokens == 0) return cudaSuccess;
  return DispatchDtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const unsigned grid = static_cast<unsigned>((tokens + kExpectedBlock - 1) / kExpectedBlock);
    EpilogueExpectedKernel<T><<<grid, kExpectedBlock, 0, stream>>>(
        p, static_cast<T*>(out_want), static_cast<T*>(residual_want), tokens, world, generation);
    return cudaGetLastError();
  });
}

}  // namespace ccltune::kernels

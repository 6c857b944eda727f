// Device side of the epilogues (epilogue_kernels.h), shared by the separate kernel and the
// fused all-reduce: a block holds one row in registers as fp32, cut into 16-byte vectors
// strided over its threads, adds the residual (or the bias), sums the squares across the
// block and stores the normalised row. Also the host-side checks both launchers share.
#pragma once

#include <cstdint>

#include "core/kernels/epilogue_kernels.h"
#include "core/kernels/peer_kernels.h"
#include "core/kernels/peer_vector.cuh"

namespace ccltune::kernels {

// fp32 values of a row one thread keeps: kMaxEpilogueHidden needs 512 threads, and 32
// floats plus a vector per peer still fit the 128 registers of a 512-thread block.
inline constexpr int kEpilogueFloatsPerThread = 32;
static_assert(kMaxEpilogueHidden <= kEpilogueFloatsPerThread * kMaxReduceThreads);

inline bool EpilogueHiddenOk(int hidden) {
  return hidden > 0 && hidden % kEpilogueHiddenMultiple == 0 && hidden <= kMaxEpilogueHidden;
}

// Whether `threads` per block can hold a row of `hidden` elements in registers.
inline bool EpilogueThreadsOk(int hidden, int threads) {
  return threads >= 32 && threads <= kMaxReduceThreads && threads % 32 == 0 &&
         static_cast<long long>(threads) * kEpilogueFloatsPerThread >= hidden;
}

// One thread's share of a row: vector v is the row's vector threadIdx.x + v * blockDim.x.
template <class T>
struct RowRegs {
  static constexpr int kN = Lanes<T>::kN;
  static constexpr int kV = kEpilogueFloatsPerThread / kN;
  float x[kV][kN];
};

// f(v, j) for each of this thread's vectors v that lies in the row (j: the row's vector).
// Unrolled, so x[v] stays in registers.
template <class T, class F>
__device__ inline void ForRowVectors(int nvec, F&& f) {
#pragma unroll
  for (int v = 0; v < RowRegs<T>::kV; ++v) {
    const int j = static_cast<int>(threadIdx.x) + v * static_cast<int>(blockDim.x);
    if (j < nvec) f(v, j);
  }
}

// The block's sum of `v`. Every thread adds the warps' partials in the same order, so all
// hold the same value (and every rank, running the same shape, the same bits). `scratch`:
// 32 floats of shared memory; the first barrier keeps the previous row's readers safe.
__device__ inline float BlockSum(float v, float* scratch) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads();
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float t = 0.f;
  const int warps = static_cast<int>(blockDim.x + 31) / 32;
  for (int w = 0; w < warps; ++w) t += scratch[w];
  return t;
}

// Stores vector j of a row into each of the `n` destination rows.
template <class T>
__device__ inline void StoreRowVector(T* const* dst, int n, int j, const uint4& v) {
#pragma unroll
  for (int d = 0; d < kMaxPeers; ++d) {
    if (d < n) __stcg(reinterpret_cast<uint4*>(dst[d]) + j, v);
  }
}

// Where a finished row goes: `n` copies (ours, or every rank's in two-shot), and the row
// of the residual the sum is added to (our own copy; unused by kBias).
template <class T>
struct RowTargets {
  const T* residual_in;
  T* residual[kMaxPeers];
  T* out[kMaxPeers];
  int n;
};

// The epilogue of a reduced row held in `r`: bias add, or residual add + RMSNorm. Every
// thread of the block must call it (the norm's block sum synchronises the block).
template <class T, EpilogueOp OP>
__device__ inline void FinishRow(const EpilogueParams& p, RowRegs<T>& r, int nvec,
                                 const RowTargets<T>& to, float* scratch) {
  constexpr int kN = Lanes<T>::kN;
  const uint4* weight = static_cast<const uint4*>(p.weight);
  if constexpr (OP == EpilogueOp::kBias) {
    ForRowVectors<T>(nvec, [&](int v, int j) {
      float b[kN];
      Unpack<T>(__ldg(weight + j), b);
#pragma unroll
      for (int k = 0; k < kN; ++k) r.x[v][k] += b[k];
      StoreRowVector<T>(to.out, to.n, j, Pack<T>(r.x[v]));
    });
  } else {
    float squares = 0.f;
    const uint4* res = reinterpret_cast<const uint4*>(to.residual_in);
    ForRowVectors<T>(nvec, [&](int v, int j) {
      float add[kN];
      Unpack<T>(__ldcg(res + j), add);
#pragma unroll
      for (int k = 0; k < kN; ++k) {
        r.x[v][k] += add[k];
        squares += r.x[v][k] * r.x[v][k];
      }
      StoreRowVector<T>(to.residual, to.n, j, Pack<T>(r.x[v]));
    });
    // The norm uses the fp32 residual, not its rounded copy, as the reference does.
    const float scale = rsqrtf(BlockSum(squares, scratch) / static_cast<float>(p.hidden) + p.eps);
    ForRowVectors<T>(nvec, [&](int v, int j) {
      float g[kN];
      Unpack<T>(__ldg(weight + j), g);
#pragma unroll
      for (int k = 0; k < kN; ++k) r.x[v][k] = r.x[v][k] * scale * g[k];
      StoreRowVector<T>(to.out, to.n, j, Pack<T>(r.x[v]));
    });
  }
}

}  // namespace ccltune::kernels

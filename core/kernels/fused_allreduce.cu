// The fused all-reduce + epilogue (LaunchFusedAllReduce, epilogue_kernels.h): the peer
// kernels of peer_reduce.cu with rows instead of flat ranges, so the block that sums a row
// also normalises it while the sum is still in its registers. Same epochs, barriers,
// parities and bounded waits as OneShotKernel, OneShotLLKernel and TwoShotKernel.
// Push two-shot and push (non-LL) one-shot are not implemented: cudaErrorInvalidValue.
#include "core/kernels/epilogue_kernels.h"
#include "core/kernels/epilogue_row.cuh"
#include "core/kernels/peer_launch.cuh"
#include "core/kernels/peer_sync.cuh"
#include "core/kernels/peer_vector.cuh"

namespace ccltune::kernels {
namespace {

template <class T>
__device__ inline T* Operand(void* const (&a)[kMaxPeers], int r) {
  return static_cast<T*>(Pick(a, r));
}
template <class T>
__device__ inline const T* Input(const FusedOperands& ops, int r) {
  return static_cast<const T*>(Pick(ops.in, r));
}

struct RowRange {
  std::uint64_t begin;
  std::uint64_t end;
};

// Two-shot: rank r owns rows [r * R, (r + 1) * R), R = ceil(tokens / world).
__device__ inline RowRange OwnedRows(std::uint64_t tokens, const PeerTeam& team) {
  const std::uint64_t share = (tokens + team.world - 1) / team.world;
  const std::uint64_t begin = share * team.rank;
  const std::uint64_t end = begin + share;
  return {begin < tokens ? begin : tokens, end < tokens ? end : tokens};
}

// Row `row` of every rank's input (pull), summed in rank order: the same bits everywhere.
template <class T>
__device__ inline void PullRow(const FusedOperands& ops, int world, std::uint64_t at, int nvec,
                               RowRegs<T>& r) {
  constexpr int kN = Lanes<T>::kN;
  const uint4* src[kMaxPeers];
#pragma unroll
  for (int p = 0; p < kMaxPeers; ++p) {
    if (p < world) src[p] = reinterpret_cast<const uint4*>(Input<T>(ops, p) + at);
  }
  ForRowVectors<T>(nvec, [&](int v, int j) {
    uint4 w[kMaxPeers];
#pragma unroll
    for (int p = 0; p < kMaxPeers; ++p) {
      if (p < world) w[p] = __ldcg(src[p] + j);
    }
    Unpack<T>(w[0], r.x[v]);
#pragma unroll
    for (int p = 1; p < kMaxPeers; ++p) {
      if (p >= world) break;
      float tmp[kN];
      Unpack<T>(w[p], tmp);
#pragma unroll
      for (int k = 0; k < kN; ++k) r.x[v][k] += tmp[k];
    }
  });
}

// Where row `at` goes: our own out (and residual) only, or every rank's, our own first,
// then the next ranks (AllOutputs in peer_reduce.cu).
template <class T, EpilogueOp OP>
__device__ inline RowTargets<T> TargetsOf(const PeerTeam& team, const FusedOperands& ops,
                                          std::uint64_t at, int n) {
  RowTargets<T> to{};
  to.n = n;
#pragma unroll
  for (int d = 0; d < kMaxPeers; ++d) {
    if (d >= n) break;
    const int r = (team.rank + d) % team.world;
    to.out[d] = Operand<T>(ops.out, r) + at;
    if constexpr (OP == EpilogueOp::kResidualRmsNorm) {
      to.residual[d] = Operand<T>(ops.residual, r) + at;
    }
  }
  if constexpr (OP == EpilogueOp::kResidualRmsNorm) to.residual_in = to.residual[0];
  return to;
}

// Pull one-shot (every rank all rows, writes only its own) and two-shot (its share of the
// rows, written into every rank). Barrier 1: every input ready, every output free.
// Barrier 2: nobody reads our input any more, and (two-shot) our rows are everywhere.
template <class T, EpilogueOp OP>
__global__ void __launch_bounds__(kMaxReduceThreads)
    FusedPullKernel(PeerTeam team, FusedOperands ops, std::uint64_t tokens, EpilogueParams p,
                    bool two_shot) {
  __shared__ BlockSync s;
  __shared__ float scratch[32];
  if (!BeginBlock(team, &s)) return;
  if (!PeerBarrier<Carries::kArrival>(team, &s, 1)) return;
  const RowRange rows = two_shot ? OwnedRows(tokens, team) : RowRange{0, tokens};
  const int nvec = p.hidden / Lanes<T>::kN;
  for (std::uint64_t row = rows.begin + blockIdx.x; row < rows.end; row += gridDim.x) {
    const std::uint64_t at = row * static_cast<std::uint64_t>(p.hidden);
    RowRegs<T> r;
    PullRow<T>(ops, team.world, at, nvec, r);
    FinishRow<T, OP>(p, r, nvec, TargetsOf<T, OP>(team, ops, at, two_shot ? team.world : 1),
                     scratch);
  }
  const bool done = two_shot ? PeerBarrier<Carries::kWrites>(team, &s, 2)
                             : PeerBarrier<Carries::kArrival>(team, &s, 2);
  if (!done) return;
  EndBlock(team, &s, 2);
}

// LL staging of a launch: slot `src` of parity `parity` in rank `owner`'s staging.
struct LLSlots {
  int parity;
  int world;
  std::uint64_t lines;  // per slot: LLLines(tokens * hidden * sizeof(T))
  __device__ uint4* At(const FusedOperands& ops, int owner, int src) const {
    return static_cast<uint4*>(Pick(ops.staging, owner)) +
           (static_cast<std::uint64_t>(parity) * world + src) * lines;
  }
};

// Our row (lines 2j, 2j + 1 per vector j) into slot `rank` of every peer's staging.
template <class T>
__device__ inline void PushRowLL(const PeerTeam& team, const FusedOperands& ops,
                                 const LLSlots& slots, std::uint64_t at, int nvec,
                                 unsigned int flag) {
  const uint4* mine = reinterpret_cast<const uint4*>(Input<T>(ops, team.rank) + at);
  const std::uint64_t line = at * sizeof(T) / 8;
  ForRowVectors<T>(nvec, [&](int, int j) {
    const uint4 d = __ldcg(mine + j);
    for (int k = 1; k < team.world; ++k) {
      uint4* dst = slots.At(ops, (team.rank + k) % team.world, team.rank) + line + 2 * j;
      StoreLL(dst, make_uint2(d.x, d.y), flag);
      StoreLL(dst + 1, make_uint2(d.z, d.w), flag);
    }
  });
}

// Vector j of rank `src`'s row from our staging; false when the bound ran out.
__device__ inline bool PollVectorLL(const PeerTeam& team, const uint4* lines, unsigned int flag,
                                    std::uint64_t since, uint4* v, bool* waited) {
  uint2 a, b;
  if (!LoadLL(lines, flag, team, since, &a, waited) ||
      !LoadLL(lines + 1, flag, team, since, &b, waited)) {
    return false;
  }
  *v = make_uint4(a.x, a.y, b.x, b.y);
  return true;
}

// The row summed in rank order: ours from our input, the peers' polled from our staging.
// False (for this thread) when a peer's line did not come in time; each such peer is noted
// (a late peer's remaining vectors are not polled, so the others cost at most a few polls
// each once the bound passed). The peer loop stays rolled: unrolled, its polling loops
// (peers x vectors x 2) push the kernel into spills.
template <class T>
__device__ inline bool GatherRowLL(const PeerTeam& team, const FusedOperands& ops,
                                   const LLSlots& slots, std::uint64_t at, int nvec,
                                   unsigned int flag, std::uint64_t since, RowRegs<T>& r,
                                   bool* waited) {
  constexpr int kN = Lanes<T>::kN;
  const uint4* mine = reinterpret_cast<const uint4*>(Input<T>(ops, team.rank) + at);
  const std::uint64_t line = at * sizeof(T) / 8;
  bool ok = true;
#pragma unroll 1
  for (int p = 0; p < team.world; ++p) {
    const uint4* lines = p == team.rank ? nullptr : slots.At(ops, team.rank, p) + line;
    bool arrived = true;
    ForRowVectors<T>(nvec, [&](int v, int j) {
      uint4 w = make_uint4(0, 0, 0, 0);
      if (lines == nullptr) {
        w = __ldcg(mine + j);
      } else if (arrived) {
        arrived = PollVectorLL(team, lines + 2 * j, flag, since, &w, waited);
      }
      float tmp[kN];
      Unpack<T>(w, tmp);
#pragma unroll
      for (int k = 0; k < kN; ++k) r.x[v][k] = p == 0 ? tmp[k] : r.x[v][k] + tmp[k];
    });
    if (!arrived) {
      NoteMissing(team, p);
      ok = false;
    }
  }
  return ok;
}

// LL one-shot by rows: block b pushes the lines of its rows to every peer, then polls the
// same rows' lines from the peers in its own staging; no barrier. Staging alternates by
// parity, as in OneShotLLKernel: a peer writes parity p again only after finishing the next
// launch, which needs our lines of that launch, sent only after we finished this one.
// Min blocks 1: left to its default, ptxas caps this kernel at 64 registers and spills.
template <class T, EpilogueOp OP>
__global__ void __launch_bounds__(kMaxReduceThreads, 1)
    FusedLLKernel(PeerTeam team, FusedOperands ops, std::uint64_t tokens, EpilogueParams p) {
  __shared__ BlockSync s;
  __shared__ float scratch[32];
  if (!BeginBlock(team, &s)) return;
  const unsigned int flag = s.base + 1;
  const LLSlots slots{static_cast<int>(s.base & 1), team.world,
                      LLLines(tokens * p.hidden * sizeof(T))};
  const int nvec = p.hidden / Lanes<T>::kN;
  const std::uint64_t hidden = static_cast<std::uint64_t>(p.hidden);
  for (std::uint64_t row = blockIdx.x; row < tokens; row += gridDim.x) {
    PushRowLL<T>(team, ops, slots, row * hidden, nvec, flag);
  }
  const std::uint64_t since = PeerNowNs();
  for (std::uint64_t row = blockIdx.x; row < tokens; row += gridDim.x) {
    RowRegs<T> r;
    bool waited = false;
    const bool ok = GatherRowLL<T>(team, ops, slots, row * hidden, nvec, flag, since, r, &waited);
    // The whole block leaves together: the norm below synchronises the block.
    if (__syncthreads_or(!ok)) {
      if (!ok) MarkTimedOut(team);
      return;
    }
    NoteArrival(team, &s, waited);  // the first row's lines from every peer are in
    FinishRow<T, OP>(p, r, nvec, TargetsOf<T, OP>(team, ops, row * hidden, 1), scratch);
  }
  EndBlock(team, &s, 1);
}

template <class T, EpilogueOp OP>
cudaError_t LaunchFusedTyped(PeerAlgo algo, const PeerTeam& team, const FusedOperands& ops,
                             std::uint64_t tokens, const EpilogueParams& p, const PeerShape& shape,
                             cudaStream_t stream) {
  const dim3 grid(shape.blocks), block(shape.threads);
  if (shape.ll) {
    FusedLLKernel<T, OP><<<grid, block, 0, stream>>>(team, ops, tokens, p);
  } else {
    FusedPullKernel<T, OP>
        <<<grid, block, 0, stream>>>(team, ops, tokens, p, algo == PeerAlgo::kTwoShot);
  }
  return cudaGetLastError();
}

template <class T>
cudaError_t LaunchFusedOp(PeerAlgo algo, const PeerTeam& team, const FusedOperands& ops,
                          std::uint64_t tokens, const EpilogueParams& p, const PeerShape& shape,
                          cudaStream_t stream) {
  if (p.op == EpilogueOp::kBias) {
    return LaunchFusedTyped<T, EpilogueOp::kBias>(algo, team, ops, tokens, p, shape, stream);
  }
  return LaunchFusedTyped<T, EpilogueOp::kResidualRmsNorm>(algo, team, ops, tokens, p, shape,
                                                           stream);
}

// Implemented: pull one-shot, LL one-shot, pull two-shot.
bool FusedShapeOk(PeerAlgo algo, const PeerTeam& team, const PeerShape& shape, int hidden) {
  const bool one_shot = algo == PeerAlgo::kOneShot && (shape.ll || !shape.push);
  const bool two_shot = algo == PeerAlgo::kTwoShot && !shape.ll && !shape.push;
  return (one_shot || two_shot) && team.world >= 2 && team.world <= kMaxPeers && team.rank >= 0 &&
         team.rank < team.world && shape.blocks >= 1 && shape.blocks <= kMaxPeerBlocks &&
         EpilogueThreadsOk(hidden, shape.threads);
}

// Null operands are invalid; misaligned ones are cudaErrorMisalignedAddress. One-shot
// touches only our own out and residual, two-shot every rank's.
cudaError_t CheckFusedOperands(PeerAlgo algo, const PeerTeam& team, const FusedOperands& ops,
                               const EpilogueParams& p, const PeerShape& shape) {
  const bool norm = p.op == EpilogueOp::kResidualRmsNorm;
  bool present = p.weight != nullptr, aligned = Aligned16(p.weight);
  auto need = [&](const void* q) {
    present = present && q != nullptr;
    aligned = aligned && Aligned16(q);
  };
  for (int r = 0; r < team.world; ++r) {
    need(ops.in[r]);
    const bool written = algo == PeerAlgo::kTwoShot || r == team.rank;
    if (written) need(ops.out[r]);
    if (written && norm) need(ops.residual[r]);
    if (shape.ll) need(ops.staging[r]);
  }
  if (!present) return cudaErrorInvalidValue;
  return aligned ? cudaSuccess : cudaErrorMisalignedAddress;
}

}  // namespace

std::uint64_t FusedStagingBytes(PeerAlgo algo, const PeerShape& shape, std::uint64_t tokens,
                                int hidden, core::Dtype dtype, int world) {
  if (algo != PeerAlgo::kOneShot || !shape.ll || hidden <= 0 || world < 1) return 0;
  const std::uint64_t row_bytes = static_cast<std::uint64_t>(hidden) * core::DtypeSize(dtype);
  return 2ull * static_cast<std::uint64_t>(world) * LLLines(tokens * row_bytes) * 16;
}

cudaError_t LaunchFusedAllReduce(PeerAlgo algo, const PeerTeam& team, const FusedOperands& ops,
                                 std::uint64_t tokens, const EpilogueParams& p, core::Dtype dtype,
                                 const PeerShape& shape, cudaStream_t stream) {
  if (!EpilogueHiddenOk(p.hidden) || !core::IsFloat(dtype) ||
      !FusedShapeOk(algo, team, shape, p.hidden)) {
    return cudaErrorInvalidValue;
  }
  const cudaError_t operands = CheckFusedOperands(algo, team, ops, p, shape);
  if (operands != cudaSuccess) return operands;
  // Every rank skips alike, so the epochs stay in step.
  if (tokens == 0) return cudaSuccess;
  switch (dtype) {
    case core::Dtype::kFp32:
      return LaunchFusedOp<float>(algo, team, ops, tokens, p, shape, stream);
    case core::Dtype::kFp16:
      return LaunchFusedOp<__half>(algo, team, ops, tokens, p, shape, stream);
    default:
      return LaunchFusedOp<__nv_bfloat16>(algo, team, ops, tokens, p, shape, stream);
  }
}

}  // namespace ccltune::kernels

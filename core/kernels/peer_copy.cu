// The copying peer kernels (peer_kernels.h): the all-gather kernel (pull: read every
// peer's block; push: write ours into every peer), the lone barrier, the signal reset and
// the capability probe; and LaunchPeerCollective, which checks arguments and dispatches.
#include "core/kernels/peer_launch.cuh"
#include "core/kernels/peer_sync.cuh"
#include "core/kernels/peer_vector.cuh"

namespace ccltune::kernels {
namespace {

// Words [0, words) of `src` to `dst`, this thread's share of the grid's walk: the same
// share on every rank, so a peer's thread reads exactly what ours wrote.
template <class W, int U>
__device__ inline void CopyShare(const W* src, W* dst, std::uint64_t words) {
  W v[U];
  StridedSteps<U>(
      FlatThread(), words, FlatStride(), [&](int u, std::uint64_t w) { v[u] = __ldcg(src + w); },
      [&](int u, std::uint64_t w) { __stcg(dst + w, v[u]); });
}

// Both directions end with a barrier: pull so nobody overwrites an input a peer still
// reads, push so our writes into the peers are complete everywhere. Push also starts with
// one, so a peer's output is not overwritten before the peer is done with its previous
// contents. Staged in the kernel (pull with ops.own_in set): each thread first copies its
// share of the program's input into in[rank] (what the same thread of every peer reads),
// and the first barrier carries those writes.
template <class W, int U>
__global__ void __launch_bounds__(1024)
    AllGatherKernel(PeerTeam team, PeerOperands ops, std::uint64_t words, bool push) {
  __shared__ BlockSync s;
  if (!BeginBlock(team, &s)) return;
  const bool stage = !push && ops.own_in != nullptr;
  if (stage) {
    // in[rank] is this rank's staging region here: ours to write.
    CopyShare<W, U>(static_cast<const W*>(ops.own_in),
                    static_cast<W*>(const_cast<void*>(Pick(ops.in, team.rank))), words);
  }
  const bool ready = stage ? PeerBarrier<Carries::kWrites>(team, &s, 1)
                           : PeerBarrier<Carries::kArrival>(team, &s, 1);
  if (!ready) return;
  for (int d = 0; d < team.world; ++d) {
    const int r = (team.rank + d) % team.world;  // spread the traffic over the peers
    const W* src = static_cast<const W*>(Pick(ops.in, push ? team.rank : r));
    W* dst = static_cast<W*>(Pick(ops.out, push ? r : team.rank)) + (push ? team.rank : r) * words;
    CopyShare<W, U>(src, dst, words);
  }
  // Push wrote into the peers; pull read them and wrote only our own output.
  const bool done = push ? PeerBarrier<Carries::kWrites>(team, &s, 2)
                         : PeerBarrier<Carries::kArrival>(team, &s, 2);
  if (!done) return;
  EndBlock(team, &s, 2);
}

__global__ void BarrierKernel(PeerTeam team) {
  __shared__ BlockSync s;
  if (!BeginBlock(team, &s)) return;
  // Closes the copy engines' writes into the peers (and opens them: arrival is enough
  // there, but one kernel serves both).
  if (!PeerBarrier<Carries::kWrites>(team, &s, 1)) return;
  EndBlock(team, &s, 1);
}

__global__ void ProbeWriteKernel(PeerTeam team, ProbeSlots probe, int value) {
  const int r = threadIdx.x;
  if (r < team.world) {
    *reinterpret_cast<volatile unsigned int*>(Pick(probe.slot, r) + team.rank) = value + team.rank;
    __threadfence_system();
  }
}

// The widest word that divides every block's offset and length (the program's input too,
// where the kernel stages it).
int CopyWord(const PeerOperands& ops, int world, std::uint64_t bytes) {
  std::uintptr_t bits = bytes | reinterpret_cast<std::uintptr_t>(ops.own_in);
  for (int r = 0; r < world; ++r) {
    bits |=
        reinterpret_cast<std::uintptr_t>(ops.in[r]) | reinterpret_cast<std::uintptr_t>(ops.out[r]);
  }
  for (int w = 16; w > 1; w /= 2) {
    if ((bits & (w - 1)) == 0) return w;
  }
  return 1;
}

template <class W>
cudaError_t LaunchGather(const PeerTeam& team, const PeerOperands& ops, std::uint64_t bytes,
                         const PeerShape& shape, cudaStream_t stream) {
  const std::uint64_t words = bytes / sizeof(W);
  if (shape.unroll == 2) {
    AllGatherKernel<W, 2><<<shape.blocks, shape.threads, 0, stream>>>(team, ops, words, shape.push);
  } else {
    AllGatherKernel<W, 1><<<shape.blocks, shape.threads, 0, stream>>>(team, ops, words, shape.push);
  }
  return cudaGetLastError();
}

cudaError_t LaunchAllGather(const PeerTeam& team, const PeerOperands& ops, std::uint64_t bytes,
                            const PeerShape& shape, cudaStream_t stream) {
  switch (CopyWord(ops, team.world, bytes)) {
    case 16:
      return LaunchGather<uint4>(team, ops, bytes, shape, stream);
    case 8:
      return LaunchGather<unsigned long long>(team, ops, bytes, shape, stream);
    case 4:
      return LaunchGather<unsigned int>(team, ops, bytes, shape, stream);
    case 2:
      return LaunchGather<unsigned short>(team, ops, bytes, shape, stream);
    default:
      return LaunchGather<unsigned char>(team, ops, bytes, shape, stream);
  }
}

}  // namespace

std::uint64_t StagingBytes(PeerAlgo algo, const PeerShape& shape, std::uint64_t count,
                           core::Dtype dtype, int world) {
  const std::uint64_t esize = core::DtypeSize(dtype);
  if (shape.ll && algo == PeerAlgo::kOneShot) return 2ull * world * LLLines(count * esize) * 16;
  if (!shape.push || algo == PeerAlgo::kAllGather) return 0;
  // The slots the kernels address: two-shot's per-rank segment, else the whole message.
  const std::uint64_t slot =
      algo == PeerAlgo::kTwoShot ? SegmentCount(count, world, esize) : PaddedCount(count, esize);
  return 2ull * world * slot * esize;
}

cudaError_t LaunchPeerCollective(PeerAlgo algo, const PeerTeam& team, const PeerOperands& ops,
                                 std::uint64_t count, core::Dtype dtype, core::RedOp redop,
                                 const PeerShape& shape, cudaStream_t stream) {
  if (team.world < 2 || team.world > kMaxPeers || shape.blocks < 1 ||
      shape.blocks > kMaxPeerBlocks || shape.threads < 32 || shape.threads > 1024 ||
      shape.threads % 32 != 0 || shape.unroll < 1 || shape.unroll > kMaxUnroll || count == 0) {
    return cudaErrorInvalidValue;
  }
  if (algo == PeerAlgo::kAllGather) {
    return LaunchAllGather(team, ops, count * core::DtypeSize(dtype), shape, stream);
  }
  if (!core::IsFloat(dtype) || shape.threads > kMaxReduceThreads) return cudaErrorInvalidValue;
  return LaunchPeerReduce(algo, team, ops, count, dtype, redop, shape, stream);
}

cudaError_t LaunchPeerBarrier(const PeerTeam& team, cudaStream_t stream) {
  BarrierKernel<<<1, 32, 0, stream>>>(team);
  return cudaGetLastError();
}

cudaError_t ResetPeerSignals(const PeerTeam& team, cudaStream_t stream) {
  cudaError_t e = cudaMemsetAsync(team.signals[team.rank], 0, sizeof(PeerSignals), stream);
  if (e != cudaSuccess) return e;
  return cudaMemsetAsync(team.epochs, 0, sizeof(unsigned int) * kEpochWords, stream);
}

cudaError_t LaunchPeerProbeWrite(const PeerTeam& team, const ProbeSlots& probe, int value,
                                 cudaStream_t stream) {
  ProbeWriteKernel<<<1, 32, 0, stream>>>(team, probe, value);
  return cudaGetLastError();
}

}  // namespace ccltune::kernels

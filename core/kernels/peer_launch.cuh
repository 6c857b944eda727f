// Host-and-device arithmetic the peer kernels and their launchers share: segment and slot
// sizes (whole 16-byte vectors, so every segment start stays aligned) and the alignment
// test that picks the vector or the element path.
#pragma once

#include <cstdint>

#include "core/kernels/peer_kernels.h"

namespace ccltune::kernels {

// `count` elements of `esize` bytes rounded up to whole 16-byte vectors.
__host__ __device__ inline std::uint64_t PaddedCount(std::uint64_t count, std::uint64_t esize) {
  const std::uint64_t n = 16 / esize;
  return (count + n - 1) / n * n;
}
template <class T>
__host__ __device__ inline std::uint64_t PaddedCount(std::uint64_t count) {
  return PaddedCount(count, sizeof(T));
}

// Two-shot's segment per rank: count / world rounded up to whole vectors.
__host__ __device__ inline std::uint64_t SegmentCount(std::uint64_t count, int world,
                                                      std::uint64_t esize) {
  return PaddedCount((count + world - 1) / world, esize);
}
template <class T>
__host__ __device__ inline std::uint64_t SegmentCount(std::uint64_t count, int world) {
  return SegmentCount(count, world, sizeof(T));
}

// Length of segment r (the last ones may be short or empty).
__host__ __device__ inline std::uint64_t SegmentLength(std::uint64_t count, std::uint64_t seg,
                                                       int r) {
  const std::uint64_t begin = static_cast<std::uint64_t>(r) * seg;
  if (begin >= count) return 0;
  return count - begin < seg ? count - begin : seg;
}

// LL lines: 8 data bytes each (16 bytes in staging with the two flags).
__host__ __device__ inline std::uint64_t LLLines(std::uint64_t bytes) { return (bytes + 7) / 8; }

inline bool Aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

inline bool OperandsAligned(const PeerOperands& ops, int world) {
  for (int r = 0; r < world; ++r) {
    if (!Aligned16(ops.in[r]) || !Aligned16(ops.out[r]) || !Aligned16(ops.staging[r])) {
      return false;
    }
  }
  // Not own_in/own_out: the walk must be the same on every rank (direct mode's copies
  // assume it), and a program buffer's alignment is each rank's own (CopyOwn* cope).
  return true;
}

cudaError_t LaunchPeerReduce(PeerAlgo algo, const PeerTeam& team, const PeerOperands& ops,
                             std::uint64_t count, core::Dtype dtype, core::RedOp redop,
                             const PeerShape& shape, cudaStream_t stream);

}  // namespace ccltune::kernels

// The reducing peer kernels (peer_kernels.h): one-shot and two-shot all-reduce and the
// reduce-scatter half, each in pull mode (read the peers' inputs) and push mode (write
// into the peers' staging, then reduce locally), and pull one-shot and two-shot in direct
// mode (PeerOperands::direct, issue 43). Sums run in rank order on every rank, so all ranks
// hold bit-identical results.
#include "core/kernels/peer_launch.cuh"
#include "core/kernels/peer_sync.cuh"
#include "core/kernels/peer_vector.cuh"

namespace ccltune::kernels {
namespace {

// [0, len) of `world` sources, combined in rank order, times `scale` (PeerOperands::scale),
// stored to each of `ndst` outputs.
template <class T, core::RedOp OP, bool VEC, int U>
__device__ inline void ReduceInto(const T* const* src, int world, T* const* dst, int ndst,
                                  std::uint64_t len, float scale) {
  constexpr int kN = Lanes<T>::kN;
  uint4 v[U][kMaxPeers];
  WalkRange<T, VEC, U>(
      len,
      [&](int u, std::uint64_t i) {
#pragma unroll
        for (int r = 0; r < kMaxPeers; ++r) {
          if (r < world) v[u][r] = __ldcg(reinterpret_cast<const uint4*>(src[r] + i));
        }
      },
      [&](int u, std::uint64_t i) {
        float acc[kN], tmp[kN];
        Unpack<T>(v[u][0], acc);
#pragma unroll
        for (int r = 1; r < kMaxPeers; ++r) {
          if (r >= world) break;
          Unpack<T>(v[u][r], tmp);
#pragma unroll
          for (int k = 0; k < kN; ++k) acc[k] = Combine<OP>(acc[k], tmp[k]);
        }
#pragma unroll
        for (int k = 0; k < kN; ++k) acc[k] *= scale;
        const uint4 out = Pack<T>(acc);
#pragma unroll
        for (int d = 0; d < kMaxPeers; ++d) {
          if (d < ndst) __stcg(reinterpret_cast<uint4*>(dst[d] + i), out);
        }
      },
      [&](std::uint64_t i) {
        float acc = ToF<T>(__ldcg(src[0] + i));
#pragma unroll
        for (int r = 1; r < kMaxPeers; ++r) {
          if (r < world) acc = Combine<OP>(acc, ToF<T>(__ldcg(src[r] + i)));
        }
        const T out = FromF<T>(acc * scale);
#pragma unroll
        for (int d = 0; d < kMaxPeers; ++d) {
          if (d < ndst) dst[d][i] = out;
        }
      });
}

// [0, len) of `src` copied to each of `ndst` outputs.
template <class T, bool VEC, int U>
__device__ inline void CopyInto(const T* src, T* const* dst, int ndst, std::uint64_t len) {
  uint4 v[U];
  WalkRange<T, VEC, U>(
      len, [&](int u, std::uint64_t i) { v[u] = __ldcg(reinterpret_cast<const uint4*>(src + i)); },
      [&](int u, std::uint64_t i) {
#pragma unroll
        for (int d = 0; d < kMaxPeers; ++d) {
          if (d < ndst) __stcg(reinterpret_cast<uint4*>(dst[d] + i), v[u]);
        }
      },
      [&](std::uint64_t i) {
        const T x = __ldcg(src + i);
#pragma unroll
        for (int d = 0; d < kMaxPeers; ++d) {
          if (d < ndst) dst[d][i] = x;
        }
      });
}

template <class T>
__device__ inline const T* In(const PeerOperands& ops, int r) {
  return static_cast<const T*>(Pick(ops.in, r));
}
template <class T>
__device__ inline T* Out(const PeerOperands& ops, int r) {
  return static_cast<T*>(Pick(ops.out, r));
}
// [0, len) of `src` to `dst` by the walk of CopyInto<T, VEC, U>, whatever the pointers'
// alignment: the walk (which thread copies which elements) depends on VEC alone, so the
// peers' readers, which take the same walk, read exactly what this block copied; only the
// accesses are element-wise where a program buffer is not 16-byte aligned.
template <class T, bool VEC, int U>
__device__ inline void CopyAnyAlignment(const T* src, T* dst, std::uint64_t len) {
  if (!VEC || ((reinterpret_cast<std::uintptr_t>(src) | reinterpret_cast<std::uintptr_t>(dst)) &
               15u) == 0) {
    T* to[1] = {dst};
    CopyInto<T, VEC, U>(src, to, 1, len);
    return;
  }
  constexpr int kN = Lanes<T>::kN;
  T v[U][kN];
  WalkRange<T, VEC, U>(
      len,
      [&](int u, std::uint64_t i) {
#pragma unroll
        for (int k = 0; k < kN; ++k) v[u][k] = src[i + k];
      },
      [&](int u, std::uint64_t i) {
#pragma unroll
        for (int k = 0; k < kN; ++k) dst[i + k] = v[u][k];
      },
      [&](std::uint64_t i) { dst[i] = src[i]; });
}

// Staged in the kernel (direct mode's fallback, the pull reduce-scatter's own_in): segment p
// of the program's input (`len(p)` elements at p * stride; one segment for one-shot) copied
// into our in[rank], each block its share by the same walk the readers' reduce takes, so
// that the next barrier (carrying writes) hands block b of every peer exactly what its
// block b reads.
template <class T, bool VEC, int U, class Len>
__device__ inline void CopyOwnInput(const PeerTeam& team, const PeerOperands& ops,
                                    std::uint64_t stride, int segments, Len len) {
  const T* from = static_cast<const T*>(ops.own_in);
  T* to = const_cast<T*>(In<T>(ops, team.rank));
  for (int p = 0; p < segments; ++p) {
    CopyAnyAlignment<T, VEC, U>(from + p * stride, to + p * stride, len(p));
  }
}

// Two-shot's fallback: after the last barrier our out[rank] holds every segment; segment p
// was written by rank p's block b with the reduce walk over len(p), so block b copies it to
// own_out by that walk: it reads only what the barrier it shares with rank p's block b
// carried.
template <class T, bool VEC, int U, class Len>
__device__ inline void CopyOwnOutput(const PeerTeam& team, const PeerOperands& ops,
                                     std::uint64_t seg, Len len) {
  T* own = static_cast<T*>(ops.own_out);
  for (int p = 0; p < team.world; ++p) {
    CopyAnyAlignment<T, VEC, U>(Out<T>(ops, team.rank) + p * seg, own + p * seg, len(p));
  }
}

// Rank r's program buffers from the direct table: global memory, so a runtime r is cheap.
template <class T>
__device__ inline const T* DirectIn(const PeerOperands& ops, int r) {
  return static_cast<const T*>(ops.direct->in[r]);
}
template <class T>
__device__ inline T* DirectOut(const PeerOperands& ops, int r) {
  return static_cast<T*>(ops.direct->out[r]);
}

// Slot `src` of parity `parity` in rank r's staging; slots are `slot` elements apart.
template <class T>
__device__ inline T* Slot(const PeerOperands& ops, int r, int parity, int src, int world,
                          std::uint64_t slot) {
  return static_cast<T*>(Pick(ops.staging, r)) +
         (static_cast<std::uint64_t>(parity) * world + src) * slot;
}

// Every rank's output at element offset `at`, this rank's own first, then the next ranks:
// spreads the peers' NVLink writes instead of all ranks hitting rank 0 first.
template <class T>
__device__ inline void AllOutputs(const PeerTeam& team, const PeerOperands& ops, std::uint64_t at,
                                  T** dst) {
#pragma unroll
  for (int d = 0; d < kMaxPeers; ++d) {
    if (d < team.world) dst[d] = Out<T>(ops, (team.rank + d) % team.world) + at;
  }
}

// Scatter of push mode: segment p (of `seg` elements at p * stride) of this rank's input
// goes to slot `rank` of peer p's staging; `lens(p)` is segment p's length.
template <class T, bool VEC, int U, class Len>
__device__ inline void ScatterToStaging(const PeerTeam& team, const PeerOperands& ops, int parity,
                                        std::uint64_t stride, std::uint64_t slot, Len lens) {
  for (int d = 1; d < team.world; ++d) {
    const int p = (team.rank + d) % team.world;
    T* dst[1] = {Slot<T>(ops, p, parity, team.rank, team.world, slot)};
    CopyInto<T, VEC, U>(In<T>(ops, team.rank) + p * stride, dst, 1, lens(p));
  }
}

// Sources of the local reduction after a push: our own input, the peers' slots.
template <class T>
__device__ inline void StagedSources(const PeerTeam& team, const PeerOperands& ops, int parity,
                                     std::uint64_t own_at, std::uint64_t slot, const T** src) {
#pragma unroll
  for (int r = 0; r < kMaxPeers; ++r) {
    if (r < team.world) {
      src[r] = r == team.rank ? In<T>(ops, r) + own_at
                              : Slot<T>(ops, team.rank, parity, r, team.world, slot);
    }
  }
}

// Every rank's `count` elements at offset rank * stride, reduced into our output: the
// whole message for one-shot (stride 0), our segment for the reduce-scatter half (stride
// count). Pull reads the peers' inputs between two arrival barriers; push writes our
// segment for peer p into slot `rank` of p's staging, then reduces from our own staging.
// Pull staged in the kernel (ops.own_in set): every segment of the program's input is first
// copied into in[rank] by the walk its reader takes (CopyOwnInput), and the first barrier
// carries those writes; out[rank] is then the program's output, which only this rank writes.
template <class T, core::RedOp OP, bool VEC, int U>
__device__ inline void ReduceOwnSegment(const PeerTeam& team, const PeerOperands& ops, BlockSync* s,
                                        std::uint64_t count, std::uint64_t stride, bool push) {
  const std::uint64_t mine = static_cast<std::uint64_t>(team.rank) * stride;
  const T* src[kMaxPeers];
  T* dst[1] = {Out<T>(ops, team.rank)};
  if (!push) {
    const bool stage = ops.own_in != nullptr;
    if (stage) {
      CopyOwnInput<T, VEC, U>(team, ops, stride, stride == 0 ? 1 : team.world,
                              [&](int) { return count; });
    }
    // Every input (or its staged copy) is ready.
    const bool ready = stage ? PeerBarrier<Carries::kWrites>(team, s, 1)
                             : PeerBarrier<Carries::kArrival>(team, s, 1);
    if (!ready) return;
#pragma unroll
    for (int r = 0; r < kMaxPeers; ++r) {
      if (r < team.world) src[r] = In<T>(ops, r) + mine;
    }
    ReduceInto<T, OP, VEC, U>(src, team.world, dst, 1, count, ops.scale);
    // Nobody reads our input any more (we wrote only our own output).
    if (!PeerBarrier<Carries::kArrival>(team, s, 2)) return;
    EndBlock(team, s, 2);
    return;
  }
  // Staging alternates by parity: a peer writes parity p again only after passing the
  // next launch's barrier, i.e. after we finished reading it.
  const int parity = s->base & 1;
  const std::uint64_t slot = PaddedCount<T>(count);
  ScatterToStaging<T, VEC, U>(team, ops, parity, stride, slot, [&](int) { return count; });
  if (!PeerBarrier<Carries::kWrites>(team, s, 1)) return;
  StagedSources<T>(team, ops, parity, mine, slot, src);
  ReduceInto<T, OP, VEC, U>(src, team.world, dst, 1, count, ops.scale);
  EndBlock(team, s, 1);
}

// One-shot in place: this thread's share of every rank's buffer (`src[r]`) reduced into
// registers, then barrier `barrier`, after which no rank reads our buffer any more, then
// stored over it (`out`): kHeldVectors groups of 16 bytes per thread and at most one tail
// element (apply::OneShotHoldsInPlace, which the host checks). Every rank's group is loaded
// before any is reduced, so the peers' reads are in flight together. Block b of every rank
// must read exactly the elements block b of their owner writes, so the walk is the same on
// every rank whatever its buffers' alignment: 16-byte groups always, as vectors where every
// pointer allows it, else element by element.
template <class T, core::RedOp OP>
__device__ inline bool ReduceHeld(const PeerTeam& team, BlockSync* s, unsigned int barrier,
                                  const T* const (&src)[kMaxPeers], T* out, std::uint64_t count,
                                  float scale) {
  constexpr int kN = Lanes<T>::kN;
  std::uintptr_t bits = reinterpret_cast<std::uintptr_t>(out);
#pragma unroll
  for (int r = 0; r < kMaxPeers; ++r) {
    if (r < team.world) bits |= reinterpret_cast<std::uintptr_t>(src[r]);
  }
  const bool vec = (bits & 15u) == 0;
  const std::uint64_t groups = count / kN;
  const std::uint64_t tid = FlatThread(), stride = FlatStride();
  uint4 held[kHeldVectors];
#pragma unroll
  for (int k = 0; k < kHeldVectors; ++k) {
    const std::uint64_t j = tid + k * stride;
    if (j >= groups) break;
    uint4 v[kMaxPeers];
#pragma unroll
    for (int r = 0; r < kMaxPeers; ++r) {
      if (r >= team.world) break;
      if (vec) {
        v[r] = __ldcg(reinterpret_cast<const uint4*>(src[r] + j * kN));
      } else {
        T* e = reinterpret_cast<T*>(&v[r]);
#pragma unroll
        for (int i = 0; i < kN; ++i) e[i] = __ldcg(src[r] + j * kN + i);
      }
    }
    float acc[kN], tmp[kN];
    Unpack<T>(v[0], acc);
#pragma unroll
    for (int r = 1; r < kMaxPeers; ++r) {
      if (r >= team.world) break;
      Unpack<T>(v[r], tmp);
#pragma unroll
      for (int e = 0; e < kN; ++e) acc[e] = Combine<OP>(acc[e], tmp[e]);
    }
#pragma unroll
    for (int e = 0; e < kN; ++e) acc[e] *= scale;
    held[k] = Pack<T>(acc);
  }
  const std::uint64_t t = groups * kN + tid;  // the tail: fewer elements than threads
  float tail = 0;
  if (t < count) {
    tail = ToF<T>(__ldcg(src[0] + t));
#pragma unroll
    for (int r = 1; r < kMaxPeers; ++r) {
      if (r < team.world) tail = Combine<OP>(tail, ToF<T>(__ldcg(src[r] + t)));
    }
  }
  if (!PeerBarrier<Carries::kArrival>(team, s, barrier)) return false;  // nobody reads ours
#pragma unroll
  for (int k = 0; k < kHeldVectors; ++k) {
    const std::uint64_t j = tid + k * stride;
    if (j >= groups) break;
    if (vec) {
      __stcg(reinterpret_cast<uint4*>(out + j * kN), held[k]);
    } else {
      const T* e = reinterpret_cast<const T*>(&held[k]);
#pragma unroll
      for (int i = 0; i < kN; ++i) out[j * kN + i] = e[i];
    }
  }
  if (t < count) out[t] = FromF<T>(tail * scale);
  return true;
}

// Pull one-shot in direct mode (PeerOperands::direct). Barrier 1 is the arrival and the
// vote. All vouch: read every rank's program input, write our program output, one more
// barrier (nobody reads our input any more): today's pull cost. Else: stage our input in
// the launch, a barrier carrying it, pull from the staged inputs, the closing barrier.
// all_vote is block-uniform and the same in block b of every rank, so every rank's block b
// runs the same barriers and advances its epoch alike. In place, the direct path holds
// its results until the peers have read (ReduceHeld); the fallback reads only the
// staged copies, so it writes our buffer at once.
template <class T, core::RedOp OP, bool VEC, int U>
__global__ void __launch_bounds__(kMaxReduceThreads)
    OneShotDirectKernel(PeerTeam team, PeerOperands ops, std::uint64_t count) {
  __shared__ BlockSync s;
  if (!BeginBlock(team, &s, &ops.direct->valid)) return;
  if (!PeerBarrier<Carries::kArrival>(team, &s, 1)) return;  // every input is ready
  const bool direct = s.all_vote != 0;
  if (direct && ops.own_in == ops.own_out) {
    const T* src[kMaxPeers];
#pragma unroll
    for (int r = 0; r < kMaxPeers; ++r) {
      if (r < team.world) src[r] = DirectIn<T>(ops, r);
    }
    if (ReduceHeld<T, OP>(team, &s, 2, src, DirectOut<T>(ops, team.rank), count, ops.scale)) {
      EndBlock(team, &s, 2);
    }
    return;
  }
  if (!direct) {
    CopyOwnInput<T, VEC, U>(team, ops, 0, 1, [&](int) { return count; });
    if (!PeerBarrier<Carries::kWrites>(team, &s, 2)) return;  // every staged input is ready
  }
  const T* src[kMaxPeers];
#pragma unroll
  for (int r = 0; r < kMaxPeers; ++r) {
    if (r < team.world) src[r] = direct ? DirectIn<T>(ops, r) : In<T>(ops, r);
  }
  // The fallback writes our program output itself where it is 16-byte aligned, else our
  // staging output (out[rank]) and copies it over at the end: only this rank reads either,
  // so each rank may decide by its own buffer.
  T* own = static_cast<T*>(ops.own_out);
  const bool via_staging = !direct && VEC && (reinterpret_cast<std::uintptr_t>(own) & 15u) != 0;
  T* dst[1] = {direct ? DirectOut<T>(ops, team.rank) : via_staging ? Out<T>(ops, team.rank) : own};
  ReduceInto<T, OP, VEC, U>(src, team.world, dst, 1, count, ops.scale);
  const unsigned int used = direct ? 2 : 3;
  if (!PeerBarrier<Carries::kArrival>(team, &s, used)) return;  // nobody reads our input
  if (via_staging) CopyAnyAlignment<T, VEC, U>(Out<T>(ops, team.rank), own, count);
  EndBlock(team, &s, used);
}

template <class T, core::RedOp OP, bool VEC, int U>
__global__ void __launch_bounds__(kMaxReduceThreads)
    OneShotKernel(PeerTeam team, PeerOperands ops, std::uint64_t count, bool push) {
  __shared__ BlockSync s;
  if (!BeginBlock(team, &s)) return;
  ReduceOwnSegment<T, OP, VEC, U>(team, ops, &s, count, 0, push);
}

// Pull one-shot in place on buffers every rank can reach (pooled, or one process's group):
// the results wait in registers for the barrier after which no rank reads ours
// (ReduceHeld). Two barriers, as OneShotKernel's pull.
template <class T, core::RedOp OP>
__global__ void __launch_bounds__(kMaxReduceThreads)
    OneShotHeldKernel(PeerTeam team, PeerOperands ops, std::uint64_t count) {
  __shared__ BlockSync s;
  if (!BeginBlock(team, &s)) return;
  if (!PeerBarrier<Carries::kArrival>(team, &s, 1)) return;  // every input is ready
  const T* src[kMaxPeers];
#pragma unroll
  for (int r = 0; r < kMaxPeers; ++r) {
    if (r < team.world) src[r] = In<T>(ops, r);
  }
  if (ReduceHeld<T, OP>(team, &s, 2, src, Out<T>(ops, team.rank), count, ops.scale))
    EndBlock(team, &s, 2);
}

// LL one-shot: line i of every rank's input goes, with this launch's flag, into slot
// `rank` of every peer's staging; each rank polls the lines addressed to it, so no
// barrier runs at all. Staging alternates by parity: a peer can only write parity p again
// after finishing the next launch, which needs our data of that launch, which we send
// only after finishing this one.
template <class T, core::RedOp OP>
__global__ void __launch_bounds__(kMaxReduceThreads)
    OneShotLLKernel(PeerTeam team, PeerOperands ops, std::uint64_t count) {
  __shared__ BlockSync s;
  if (!BeginBlock(team, &s)) return;
  constexpr int kE = 8 / sizeof(T);
  const unsigned int flag = s.base + 1;
  const int parity = s.base & 1;
  const std::uint64_t lines = LLLines(count * sizeof(T));
  const std::uint64_t tid = FlatThread(), stride = FlatStride();
  const uint2* mine = static_cast<const uint2*>(Pick(ops.in, team.rank));
  auto slot = [&](int owner, int src) {
    return static_cast<uint4*>(Pick(ops.staging, owner)) +
           (static_cast<std::uint64_t>(parity) * team.world + src) * lines;
  };
  for (std::uint64_t i = tid; i < lines; i += stride) {
    const uint2 d = __ldcg(mine + i);  // the input slice is padded: whole lines are readable
    for (int k = 1; k < team.world; ++k)
      StoreLL(slot((team.rank + k) % team.world, team.rank) + i, d, flag);
  }
  const std::uint64_t since = PeerNowNs();
  T* out = Out<T>(ops, team.rank);
  for (std::uint64_t i = tid; i < lines; i += stride) {
    uint2 w[kMaxPeers];
    bool late = false;  // once the bound passed, each later peer costs at most 256 polls
    bool waited = false;
#pragma unroll
    for (int r = 0; r < kMaxPeers; ++r) {
      if (r >= team.world) break;
      if (r == team.rank) {
        w[r] = __ldcg(mine + i);
      } else if (!LoadLL(slot(team.rank, r) + i, flag, team, since, &w[r], &waited)) {
        NoteMissing(team, r);
        late = true;
      }
    }
    if (late) {
      MarkTimedOut(team);
      return;
    }
    NoteArrival(team, &s, waited);  // this thread's first line from every peer is in
    float acc[kE], tmp[kE];
    Unpack8<T>(w[0], acc);
#pragma unroll
    for (int r = 1; r < kMaxPeers; ++r) {
      if (r >= team.world) break;
      Unpack8<T>(w[r], tmp);
#pragma unroll
      for (int k = 0; k < kE; ++k) acc[k] = Combine<OP>(acc[k], tmp[k]);
    }
    for (int k = 0; k < kE && i * kE + k < count; ++k) {
      out[i * kE + k] = FromF<T>(acc[k] * ops.scale);
    }
  }
  EndBlock(team, &s, 1);
}

// Pull two-shot in direct mode (PeerOperands::direct). Barrier 1 is the arrival and the
// vote. All vouch: reduce our segment of every rank's program input into every rank's
// program output, then a barrier carrying those writes: today's pull cost. Else: stage our
// input in the launch, a barrier carrying it, reduce our segment of the staged inputs into
// every rank's staging output, a barrier carrying that, and copy our staging output to our
// program output. Block b of every rank takes the same path (OneShotDirectKernel says
// why). In place is safe here: element i of segment p of rank q's buffer is read and then
// written only by the one thread of rank p's block that owns i in the walk.
template <class T, core::RedOp OP, bool VEC, int U>
__global__ void __launch_bounds__(kMaxReduceThreads)
    TwoShotDirectKernel(PeerTeam team, PeerOperands ops, std::uint64_t count) {
  __shared__ BlockSync s;
  if (!BeginBlock(team, &s, &ops.direct->valid)) return;
  const std::uint64_t seg = SegmentCount<T>(count, team.world);
  auto len = [&](int r) { return SegmentLength(count, seg, r); };
  const std::uint64_t mine = static_cast<std::uint64_t>(team.rank) * seg;
  if (!PeerBarrier<Carries::kArrival>(team, &s, 1)) return;  // inputs ready, outputs free
  const bool direct = s.all_vote != 0;
  if (!direct) {
    CopyOwnInput<T, VEC, U>(team, ops, seg, team.world, len);
    if (!PeerBarrier<Carries::kWrites>(team, &s, 2)) return;  // every staged input is ready
  }
  const T* src[kMaxPeers];
  T* dst[kMaxPeers];
#pragma unroll
  for (int r = 0; r < kMaxPeers; ++r) {
    if (r >= team.world) break;
    const int d = (team.rank + r) % team.world;  // AllOutputs' order
    src[r] = (direct ? DirectIn<T>(ops, r) : In<T>(ops, r)) + mine;
    dst[r] = (direct ? DirectOut<T>(ops, d) : Out<T>(ops, d)) + mine;
  }
  ReduceInto<T, OP, VEC, U>(src, team.world, dst, team.world, len(team.rank), ops.scale);
  const unsigned int used = direct ? 2 : 3;
  if (!PeerBarrier<Carries::kWrites>(team, &s, used)) return;  // every segment is everywhere
  if (!direct) CopyOwnOutput<T, VEC, U>(team, ops, seg, len);
  EndBlock(team, &s, used);
}

template <class T, core::RedOp OP, bool VEC, int U>
__global__ void __launch_bounds__(kMaxReduceThreads)
    TwoShotKernel(PeerTeam team, PeerOperands ops, std::uint64_t count, bool push) {
  __shared__ BlockSync s;
  if (!BeginBlock(team, &s)) return;
  const std::uint64_t seg = SegmentCount<T>(count, team.world);
  auto len = [&](int r) { return SegmentLength(count, seg, r); };
  const std::uint64_t mine = static_cast<std::uint64_t>(team.rank) * seg;
  const T* src[kMaxPeers];
  T* dst[kMaxPeers];
  AllOutputs<T>(team, ops, mine, dst);
  const int parity = (s.base >> 1) & 1;
  if (push) ScatterToStaging<T, VEC, U>(team, ops, parity, seg, seg, len);
  // Inputs (or the staging we pushed into) ready, outputs free.
  const bool ready = push ? PeerBarrier<Carries::kWrites>(team, &s, 1)
                          : PeerBarrier<Carries::kArrival>(team, &s, 1);
  if (!ready) return;
  if (push) {
    StagedSources<T>(team, ops, parity, mine, seg, src);
  } else {
#pragma unroll
    for (int r = 0; r < kMaxPeers; ++r) {
      if (r < team.world) src[r] = In<T>(ops, r) + mine;
    }
  }
  ReduceInto<T, OP, VEC, U>(src, team.world, dst, team.world, len(team.rank), ops.scale);
  if (!PeerBarrier<Carries::kWrites>(team, &s, 2)) return;  // every segment is everywhere
  EndBlock(team, &s, 2);
}

template <class T, core::RedOp OP, bool VEC, int U>
__global__ void __launch_bounds__(kMaxReduceThreads)
    ReduceScatterKernel(PeerTeam team, PeerOperands ops, std::uint64_t count, bool push) {
  __shared__ BlockSync s;
  if (!BeginBlock(team, &s)) return;
  ReduceOwnSegment<T, OP, VEC, U>(team, ops, &s, count, count, push);
}

template <class T, core::RedOp OP, bool VEC, int U>
cudaError_t LaunchTyped(PeerAlgo algo, const PeerTeam& team, const PeerOperands& ops,
                        std::uint64_t count, const PeerShape& shape, cudaStream_t stream) {
  const dim3 grid(shape.blocks), block(shape.threads);
  // Direct mode has kernels of its own, so that its second path costs today's kernels no
  // registers (pull two-shot spilled more with both paths in one kernel).
  const bool direct = ops.direct != nullptr && !shape.push;
  switch (algo) {
    case PeerAlgo::kOneShot:
      if (shape.ll) {
        OneShotLLKernel<T, OP><<<grid, block, 0, stream>>>(team, ops, count);
      } else if (direct) {
        OneShotDirectKernel<T, OP, VEC, U><<<grid, block, 0, stream>>>(team, ops, count);
      } else if (!shape.push && ops.in[team.rank] == ops.out[team.rank]) {
        OneShotHeldKernel<T, OP><<<grid, block, 0, stream>>>(team, ops, count);
      } else {
        OneShotKernel<T, OP, VEC, U><<<grid, block, 0, stream>>>(team, ops, count, shape.push);
      }
      break;
    case PeerAlgo::kTwoShot:
      if (direct) {
        TwoShotDirectKernel<T, OP, VEC, U><<<grid, block, 0, stream>>>(team, ops, count);
        break;
      }
      TwoShotKernel<T, OP, VEC, U><<<grid, block, 0, stream>>>(team, ops, count, shape.push);
      break;
    default:
      ReduceScatterKernel<T, OP, VEC, U><<<grid, block, 0, stream>>>(team, ops, count, shape.push);
      break;
  }
  return cudaGetLastError();
}

template <class T, core::RedOp OP>
cudaError_t LaunchAligned(PeerAlgo algo, const PeerTeam& team, const PeerOperands& ops,
                          std::uint64_t count, const PeerShape& shape, cudaStream_t stream) {
  // Segment starts of reduce-scatter lie at rank * count elements: 16-byte aligned only
  // when count * size is.
  if (shape.ll && !OperandsAligned(ops, team.world)) return cudaErrorMisalignedAddress;
  const bool vec = OperandsAligned(ops, team.world) &&
                   (algo != PeerAlgo::kReduceScatter || (count * sizeof(T)) % 16 == 0);
  if (!vec) return LaunchTyped<T, OP, false, 1>(algo, team, ops, count, shape, stream);
  return shape.unroll == 2 ? LaunchTyped<T, OP, true, 2>(algo, team, ops, count, shape, stream)
                           : LaunchTyped<T, OP, true, 1>(algo, team, ops, count, shape, stream);
}

// Avg runs the sum kernels with the stored results scaled by 1/world (PeerOperands::scale):
// the sum in fp32, then one rounding, where NCCL scales each input first (ncclAvg's
// PreMulSum); both lie within the correctness check's tolerance of the exact mean.
template <class T>
cudaError_t LaunchOp(PeerAlgo algo, const PeerTeam& team, const PeerOperands& ops,
                     std::uint64_t count, core::RedOp redop, const PeerShape& shape,
                     cudaStream_t stream) {
  PeerOperands scaled = ops;
  scaled.scale = redop == core::RedOp::kAvg ? 1.0f / static_cast<float>(team.world) : 1.0f;
  switch (redop) {
    case core::RedOp::kMax:
      return LaunchAligned<T, core::RedOp::kMax>(algo, team, scaled, count, shape, stream);
    case core::RedOp::kMin:
      return LaunchAligned<T, core::RedOp::kMin>(algo, team, scaled, count, shape, stream);
    case core::RedOp::kSum:
    case core::RedOp::kAvg:
      return LaunchAligned<T, core::RedOp::kSum>(algo, team, scaled, count, shape, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t LaunchPeerReduce(PeerAlgo algo, const PeerTeam& team, const PeerOperands& ops,
                             std::uint64_t count, core::Dtype dtype, core::RedOp redop,
                             const PeerShape& shape, cudaStream_t stream) {
  switch (dtype) {
    case core::Dtype::kFp32:
      return LaunchOp<float>(algo, team, ops, count, redop, shape, stream);
    case core::Dtype::kFp16:
      return LaunchOp<__half>(algo, team, ops, count, redop, shape, stream);
    case core::Dtype::kBf16:
      return LaunchOp<__nv_bfloat16>(algo, team, ops, count, redop, shape, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace ccltune::kernels

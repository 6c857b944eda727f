// Device side of the peer kernels' ordering (peer_kernels.h): release/acquire flag stores
// at system scope, the bounded wait, and the per-block barrier with every peer.
#pragma once

#include <cstdint>

#include "core/kernels/peer_kernels.h"

namespace ccltune::kernels {

// a[i] for a kernel-parameter array and a runtime i, by constant-index selects: indexing
// the parameter with a runtime value makes every thread copy the whole parameter struct
// to local memory first (hundreds of bytes per thread, per launch).
template <class P>
__device__ inline P Pick(const P (&a)[kMaxPeers], int i) {
  P v = a[0];
#pragma unroll
  for (int k = 1; k < kMaxPeers; ++k) {
    if (k == i) v = a[k];
  }
  return v;
}

__device__ inline std::uint64_t PeerNowNs() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ inline void StoreRelease(unsigned int* p, unsigned int v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ inline unsigned int LoadAcquire(const unsigned int* p) {
  unsigned int v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// GPU scope: for words this GPU's host writes in stream order (DirectSlot::valid).
__device__ inline unsigned int LoadAcquireGpu(const unsigned int* p) {
  unsigned int v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// A barrier flag: the epoch's low 31 bits, and in bit 31 the rank's vote for the launch
// (1 unless a direct-mode launch's rank does not vouch for its table, peer_kernels.h).
__device__ inline unsigned int FlagWord(unsigned int epoch, unsigned int vote) {
  return (epoch & 0x7fffffffu) | ((vote & 1u) << 31);
}

// Whether flag word v reached `epoch`: serial order on the low 31 bits (shifting the
// difference left drops bit 31, the vote, and its carry).
__device__ inline bool Reached(unsigned int v, unsigned int epoch) {
  return static_cast<int>((v - epoch) << 1) >= 0;
}

// Rank r is one a wait of this launch gave up on (PeerMemory::MissingRanks reads it).
__device__ inline void NoteMissing(const PeerTeam& team, int r) {
  reinterpret_cast<volatile int*>(team.timed_out)[1 + r] = 1;
}

// A wait ran out (or a launch found that an earlier one had): the poison word, so later
// launches do not wait again, and the host-mapped word. Without fail_stop (the tuning
// worker, which records the choice as timed out and resets) the caller then returns.
// With fail_stop (the runtime) the words are made visible to the host, then the kernel
// traps. Why a trap and not the alternatives (issue 36):
//  - returning early completes the launch as successful with outputs holding whatever they
//    held (often the previous step's sum: plausible, wrong);
//  - a host-mapped flag alone is seen only when the host calls in, and a CUDA graph replay
//    makes no host call into ccltune: replays went on "succeeding" on wrong data (~400k
//    steps in 10 s, measured on 4 H100s);
//  - the trap fails the kernel with a sticky error: the next synchronisation of the stream
//    or the context (a sync, an event query, a copy to the host) fails, so neither an eager
//    call nor a replay completes as successful, and nothing later on this GPU context does.
// NCCL's own answer to a lost peer is the same granularity: PyTorch's watchdog aborts the
// process group and the job restarts. The context is lost, which after a peer's death the
// job's state is anyway; the host-mapped words survive it, so the runtime's watcher
// (runtime/failure_watch.h) still says which rank did not arrive.
__device__ inline void MarkTimedOut(const PeerTeam& team) {
  *reinterpret_cast<volatile unsigned int*>(&team.epochs[kMaxPeerBlocks]) = 1;
  *reinterpret_cast<volatile int*>(team.timed_out) = 1;
  if (team.fail_stop != 0) {
    __threadfence_system();
    __trap();
  }
}

// Per-launch state of one block: its epoch base, whether a wait ran out, this rank's vote
// for the launch and the AND of every rank's vote seen at the last barrier (block-uniform),
// and with a timed team (PeerTeam::timing, block 0 only) its entry and the last peer's
// arrival it saw (0: none yet).
struct BlockSync {
  unsigned int base;
  int failed;
  unsigned int vote;
  int all_vote;
  unsigned long long entry;
  unsigned long long arrival;
};

__device__ inline bool Timed(const PeerTeam& team) {
  return team.timing != nullptr && blockIdx.x == 0 && threadIdx.x == 0;
}

// The last peer's arrival, as thread 0 saw it (the first time only: later barriers of the
// launch wait for peers that were slower at the work, not at the call): now when the block
// had to wait for a peer, else at entry: every peer had arrived before this rank looked, so
// this rank was the last and waited for no one (its own flag stores, or an LL kernel's own
// pushes, are its transfer, not a wait).
__device__ inline void NoteArrival(const PeerTeam& team, BlockSync* s, bool waited) {
  if (Timed(team) && s->arrival == 0) s->arrival = waited ? PeerNowNs() : s->entry;
}

__device__ inline void StoreWord(uint4* p, uint4 v) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w)
               : "memory");
}

__device__ inline unsigned int NsAfter(unsigned long long t, unsigned long long since) {
  const unsigned long long d = t - since;
  return d >= kNoArrival ? kNoArrival - 1 : static_cast<unsigned int>(d);
}

// Block 0's record of this launch (peer_kernels.h, TimingRecord): two stores, then the hint.
__device__ inline void WriteTiming(const PeerTeam& team, const BlockSync* s) {
  TimingRing* t = team.timing;
  const unsigned long long i = t->head;
  const unsigned int seq = static_cast<unsigned int>(i) + 1u;
  const unsigned int arrival = s->arrival == 0 ? kNoArrival : NsAfter(s->arrival, s->entry);
  uint4* w = reinterpret_cast<uint4*>(&t->records[i & (kTimingRecords - 1)]);
  StoreWord(w, make_uint4(seq, team.site, static_cast<unsigned int>(s->entry),
                          static_cast<unsigned int>(s->entry >> 32)));
  StoreWord(w + 1, make_uint4(seq, arrival, NsAfter(PeerNowNs(), s->entry), gridDim.x));
  t->head = i + 1;
}

// Thread 0 reads the block's epoch and this rank's vote (1 without `vouch`; with it, whether
// *vouch is 1, acquired so that what the block reads after it is not older); every thread
// sees them after the __syncthreads. False when an earlier launch timed out: the block then
// does nothing (with fail_stop, traps).
__device__ inline bool BeginBlock(const PeerTeam& team, BlockSync* s,
                                  const unsigned int* vouch = nullptr) {
  if (threadIdx.x == 0) {
    if (Timed(team)) {
      s->entry = PeerNowNs();
      s->arrival = 0;
    }
    s->vote = vouch == nullptr || LoadAcquireGpu(vouch) == 1u ? 1u : 0u;
    s->all_vote = 1;
    s->base = team.epochs[blockIdx.x];
    s->failed =
        static_cast<int>(*reinterpret_cast<volatile unsigned int*>(&team.epochs[kMaxPeerBlocks]));
    if (s->failed != 0 && team.fail_stop != 0) MarkTimedOut(team);
  }
  __syncthreads();
  return s->failed == 0;
}

// Stores the epoch the block reached (`used` barriers this launch); with a timed team, block 0
// writes the launch's record.
__device__ inline void EndBlock(const PeerTeam& team, const BlockSync* s, unsigned int used) {
  if (threadIdx.x != 0) return;
  team.epochs[blockIdx.x] = s->base + used;
  if (Timed(team)) WriteTiming(team, s);
}

__device__ inline void StoreRelaxed(unsigned int* p, unsigned int v) {
  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// What a barrier must carry across GPUs.
enum class Carries {
  // Only arrival: before it this block wrote nothing a peer reads after it (a launch's
  // first barrier in pull mode: the inputs were written by earlier kernels, complete and
  // in their owner's memory; or a last barrier after reads only: their values are in
  // hand). The flag is stored relaxed: a release at system scope first waits until every
  // earlier write of the thread is visible everywhere. The wait still acquires, so nothing
  // after the barrier moves before it.
  kArrival,
  // The block's writes into peer memory: release/acquire at system scope.
  kWrites,
};

// Thread t's wait in a barrier: until rank t's flag in ours reaches `epoch`. Returns the
// word that ended it (rank t's vote in bit 31), or 0 after noting rank t missing.
__device__ inline unsigned int WaitForPeer(const PeerTeam& team, BlockSync* s, int t,
                                           unsigned int epoch, bool* spun) {
  const unsigned int* mine = &Pick(team.signals, team.rank)->flags[blockIdx.x][t];
  const std::uint64_t start = PeerNowNs();
  unsigned int v;
  while (!Reached(v = LoadAcquire(mine), epoch)) {
    *spun = true;
    if (PeerNowNs() - start > team.timeout_ns) {
      s->failed = 1;
      NoteMissing(team, t);
      return 0;
    }
  }
  return v;
}

// s->all_vote from each waiting thread's `vote` (1 in the other threads). Every waiting
// thread (t < world <= kMaxPeers) is in warp 0, so warp 0's ballot is the AND; every warp
// runs the ballot (every peer kernel's block is whole warps), which cost today's kernels no
// registers where a ballot in warp 0 alone did. Thread 0 writes the result after every
// thread left the previous barrier (they met at this one's first __syncthreads), and the
// barrier's closing __syncthreads publishes it.
__device__ inline void GatherVotes(BlockSync* s, unsigned int vote) {
  const unsigned int against = __ballot_sync(0xffffffffu, vote == 0);
  if (threadIdx.x == 0) s->all_vote = against == 0 ? 1 : 0;
}

// Barrier number `n` (1-based) of this launch, between block blockIdx.x of every rank.
// With Carries::kWrites, writes this block made before it (local or remote) are visible
// to the peers' same block after it. Returns false (for every thread of the block) when a
// peer did not arrive in time: thread t waits for rank t, so each peer that did not is
// noted before the launch is marked (MarkTimedOut, which traps with fail_stop).
//
// The vote: every barrier of a launch stores the block's s->vote in bit 31 of its flag, and
// s->all_vote is the AND of the votes in the words that ended the waits. That word is this
// launch's: it reached this barrier's epoch, so it is from this barrier or a later one of
// the same launch (which carries the same vote); it cannot be from the peer's next launch,
// whose first barrier the peer passes only after we arrive at this launch's last one. So
// block b of every rank sees the same votes and takes the same path.
template <Carries C>
__device__ inline bool PeerBarrier(const PeerTeam& team, BlockSync* s, unsigned int n) {
  const unsigned int epoch = s->base + n;
  __syncthreads();
  const int t = threadIdx.x;
  bool spun = false;  // this thread's peer had not arrived at the first look
  unsigned int vote = 1;
  if (t < team.world) {
    unsigned int* theirs = &Pick(team.signals, t)->flags[blockIdx.x][team.rank];
    if constexpr (C == Carries::kWrites) {
      // Cumulativity: the block's writes, ordered before this thread by __syncthreads,
      // are released with the flag.
      StoreRelease(theirs, FlagWord(epoch, s->vote));
    } else {
      StoreRelaxed(theirs, FlagWord(epoch, s->vote));
    }
    vote = WaitForPeer(team, s, t, epoch, &spun) >> 31;
  }
  GatherVotes(s, vote);
  const int waited = __syncthreads_or(spun);
  if (s->failed != 0 && threadIdx.x == 0) MarkTimedOut(team);
  if (n == 1) NoteArrival(team, s, waited != 0);
  return s->failed == 0;
}

// LL line: data words x and y, each followed by the flag, in one 16-byte store, so the
// reader sees data and flag together.
__device__ inline void StoreLL(uint4* p, uint2 data, unsigned int flag) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(data.x), "r"(flag),
               "r"(data.y), "r"(flag)
               : "memory");
}

// Polls an LL line until both flags equal `flag`; false when `since` + the team's bound
// passed first. *waited (when given) is set when the line was not there at the first look.
__device__ inline bool LoadLL(const uint4* p, unsigned int flag, const PeerTeam& team,
                              std::uint64_t since, uint2* data, bool* waited = nullptr) {
  uint4 v;
  for (unsigned int spins = 0;; ++spins) {
    asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p)
                 : "memory");
    if (v.y == flag && v.w == flag) break;
    if (waited != nullptr) *waited = true;
    if ((spins & 255u) == 255u && PeerNowNs() - since > team.timeout_ns) return false;
  }
  *data = make_uint2(v.x, v.z);
  return true;
}

}  // namespace ccltune::kernels

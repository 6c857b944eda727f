// Our own intra-node collectives over peer memory (issue 6, docs/design.md §5 `oneshot`, `twoshot`,
// `p2p`, `ce`): every rank's buffers are mapped into every other rank's address space
// (CUDA IPC), so a kernel reads or writes its peers' memory directly over NVLink.
//
// Ordering between GPUs uses per-block signal flags: block b of rank r raises
// flags[b][r] in each peer's signal area to the block's next epoch with a system-scope
// release, and waits (acquire) until every peer raised its flag in ours (a flag holds the
// epoch's low 31 bits and, in bit 31, the rank's vote for the launch: peer_sync.cuh). Waits
// are bounded by %globaltimer; when the bound passes, the kernel records it (timed_out[0], and
// timed_out[1 + r] for each rank r it waited for in vain) and then either returns instead of
// hanging, the epochs out of step until ResetPeerSignals runs on every rank (the tuning
// worker, which records the choice as timed out and goes on), or, with fail_stop (the
// runtime), traps (peer_sync.cuh says why). Nothing here is host-synchronous, so every
// launch can be captured in a CUDA graph.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "core/plan/types.h"

namespace ccltune::kernels {

inline constexpr int kMaxPeers = 8;
inline constexpr int kMaxPeerBlocks = 256;
inline constexpr int kEpochWords = kMaxPeerBlocks + 1;
// The host-mapped words a team reports a wait that ran out in: [0] set when one did,
// [1 + r] set when rank r was the one that did not arrive.
inline constexpr int kTimedOutWords = 1 + kMaxPeers;
// The reducing kernels keep a pointer and a 16-byte vector per peer in registers: at most
// 512 threads per block leaves them 128 registers, so nothing spills.
inline constexpr int kMaxReduceThreads = 512;
// Unroll 2 keeps 2 x kMaxPeers vectors live (64 registers); 4 would spill at 8 peers.
inline constexpr int kMaxUnroll = 2;

// One rank's signal area, in memory every peer has mapped.
struct PeerSignals {
  unsigned int flags[kMaxPeerBlocks][kMaxPeers];
};

// Self-timing (issue 45, docs/design.md §13): each launch of a timed team leaves one record
// of what it took on this GPU, by %globaltimer (ns), as block 0 saw it: its entry, the last
// peer's arrival it saw (its first barrier's wait ended, or an LL kernel's first lines from
// every peer came; none when the kernel has no such point), and its end. Sync wait =
// arrival - entry, transfer = end - arrival. Block 0 alone, so that timing costs a launch
// two stores and no atomics or fences: the blocks of our kernels share the work evenly and
// meet at the same barriers, so block 0's times are the launch's within a block's skew.
inline constexpr unsigned long long kTimingRecords = 8192;  // a power of two
inline constexpr unsigned int kNoArrival = 0xffffffffu;
// Two 16-byte words, each written by one vector store and each carrying the record's number
// (its index + 1, low 32 bits): a reader that finds both words with the number it expects
// has the whole record, without a fence between the stores (the LL protocol's idea).
struct alignas(16) TimingRecord {
  unsigned int seq;   // word 0
  unsigned int site;  // PeerTeam::site of the launch: what the host registered it as
  unsigned long long entry;
  unsigned int seq_again;   // word 1
  unsigned int arrival_ns;  // after entry; kNoArrival: none seen
  unsigned int finish_ns;   // after entry
  unsigned int blocks;      // the launch's grid
};
// One team's ring, in device memory. Launches of one team never overlap (they share its
// signal flags), so block 0 of each launch writes record head % kTimingRecords and then
// advances head, a hint for the reader (core/gpu/timing_ring.h), which trusts the records'
// numbers, not head. Nothing waits for the host; a full ring overwrites the oldest records.
struct TimingRing {
  unsigned long long head;
  unsigned long long unused;
  TimingRecord records[kTimingRecords];
};

// Who we are and how to reach everyone's signals. Passed by value to each kernel.
struct PeerTeam {
  int rank = 0;
  int world = 1;
  PeerSignals* signals[kMaxPeers] = {};  // every rank's area, as mapped here (ours included)
  // This rank's per-block launch epochs (local), then one poison word: set when a wait
  // ran out, so the launches queued behind return at once instead of each waiting.
  unsigned int* epochs = nullptr;
  int* timed_out = nullptr;  // host-mapped, kTimedOutWords: see kTimedOutWords
  unsigned long long timeout_ns = 0;
  // 0: a wait that ran out returns (launches behind it return at once). 1: it traps, so the
  // GPU context fails and no result of it or of a later launch reaches the program as valid.
  int fail_stop = 0;
  // Self-timing: null (the tuning worker, barrier-only launches) records nothing.
  TimingRing* timing = nullptr;
  unsigned int site = 0;
};

// A captured call's table of every rank's own buffers as mapped on this GPU (issue 43), in
// device memory, written by the host between launches (in stream order: every block of a
// launch must read the same table); the kernel reads it at launch. The host sets valid to 1
// only when every entry is mapped here, 16-byte aligned (the host checks it; the kernel does
// not) and still live, and never for one-shot in place (a peer would read our input while we
// overwrite it). Each launch's ranks vote (peer_sync.cuh): the table is used only when every
// rank vouches for its own.
// In place, a direct-mode one-shot holds its reduced vectors in registers until every rank
// has read its input (the peers read what it then overwrites): at most this many 16-byte
// vectors per thread, so a call fits when count <= kHeldVectors x blocks x threads x the
// vector's elements (the host checks it before it picks direct mode for one).
inline constexpr int kHeldVectors = 4;

struct DirectSlot {
  unsigned int valid;  // 1: this rank vouches for every entry
  unsigned int unused[3];
  const void* in[kMaxPeers];  // rank r's program input
  void* out[kMaxPeers];       // rank r's program output
};

// Where one op's data lives, as mapped here, indexed by rank.
struct PeerOperands {
  const void* in[kMaxPeers] = {};  // each rank's send buffer
  void* out[kMaxPeers] = {};       // each rank's receive buffer
  void* staging[kMaxPeers] = {};   // each rank's staging area (push modes), see StagingBytes
  // Direct mode (issue 43), honoured only by pull one-shot (not LL) and pull two-shot
  // allReduce. The other pull kernels (one-shot without `direct`, reduce-scatter,
  // all-gather) read own_in alone: set, they copy it into in[rank] inside the launch (staged
  // in the kernel, apply::StagesInKernel) and write out[rank], which the host sets to the
  // program's output. Every other kernel ignores these three. Non-null `direct`: when every rank
  // vouches, the kernel reads and writes the program buffers of the table; else every rank
  // falls back to staging inside the kernel: it copies own_in into in[rank], pulls from the
  // in[r] as a staged call does, and (two-shot) copies out[rank] to own_out at the end. So
  // in[r] (and staging) describe the staged layout: in[r] is rank r's staging input region;
  // for two-shot out[r] is rank r's staging output region; one-shot uses out[rank] only,
  // which the host sets to own_out.
  const DirectSlot* direct = nullptr;
  const void* own_in = nullptr;  // this rank's program input
  void* own_out = nullptr;       // this rank's program output
  // What the reducing kernels multiply each reduced element by, in fp32, before they store
  // it: 1 (exact, so sum, max and min are untouched) but for avg, 1/world, which
  // LaunchPeerCollective sets (a caller's value is ignored).
  float scale = 1.0f;
};
static_assert(std::is_trivially_copyable_v<PeerOperands>, "PeerOperands is a kernel parameter");

struct PeerShape {
  int blocks = 8;
  int threads = 512;
  bool push = false;
  // One-shot only, push implied: each 16-byte store carries 8 data bytes and the launch's
  // flag twice (NCCL's LL idea), so readers poll the data itself and no barrier runs.
  bool ll = false;
  // Vectors each thread loads before it stores any (1 or kMaxUnroll); LL ignores it.
  int unroll = 1;
};

enum class PeerAlgo {
  kOneShot,        // allReduce: every rank reduces the whole message from all ranks
  kTwoShot,        // allReduce: reduce-scatter by segments, then all-gather the segments
  kReduceScatter,  // reduceScatter: the first half of two-shot
  kAllGather,      // allGather: a copy kernel
};

// Bytes of staging each rank needs for `algo` in push mode (0 in pull mode): double
// buffered by epoch parity, one slot per source rank.
std::uint64_t StagingBytes(PeerAlgo algo, const PeerShape& shape, std::uint64_t count,
                           core::Dtype dtype, int world);

// `count` is core::ElementCount: allReduce's elements, reduceScatter's and allGather's
// elements per rank. Float dtypes only for the reducing algorithms (fp32 accumulation);
// world 2..kMaxPeers; shape.blocks <= kMaxPeerBlocks.
cudaError_t LaunchPeerCollective(PeerAlgo algo, const PeerTeam& team, const PeerOperands& ops,
                                 std::uint64_t count, core::Dtype dtype, core::RedOp redop,
                                 const PeerShape& shape, cudaStream_t stream);

// One block's barrier with every peer, alone (the copy-engine all-gather runs it before
// and after its cudaMemcpyAsync calls).
cudaError_t LaunchPeerBarrier(const PeerTeam& team, cudaStream_t stream);

// Clears this rank's signal flags and epochs (all ranks must do it, and meet, before the
// next peer kernel anywhere).
cudaError_t ResetPeerSignals(const PeerTeam& team, cudaStream_t stream);

// Capability probe: writes `value + rank` into element `rank` of every rank's probe area
// (`slot[r]`: rank r's area as mapped here, kMaxPeers unsigned ints).
struct ProbeSlots {
  unsigned int* slot[kMaxPeers] = {};
};
cudaError_t LaunchPeerProbeWrite(const PeerTeam& team, const ProbeSlots& probe, int value,
                                 cudaStream_t stream);

}  // namespace ccltune::kernels

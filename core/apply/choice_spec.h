// What a choice name of the NCCL backend means (DESIGN §5): which memory, which
// communicator, which forced algorithm/protocol, which composition, which own kernel and
// its shape. Pure C++ (no CUDA): the worker's catalog, the runtime's dispatch table and
// their tests on machines without a GPU read names the same way.
#pragma once

#include <cstdint>
#include <string>

#include "core/choice.h"
#include "core/problem.h"
#include "core/status.h"

namespace ccltune::apply {

enum class BufferMode { kPlain, kRegistered, kSymmetric };
enum class Composition { kDirect, kReduceScatterAllGather, kBoundedSpin, kPeer };
// Our own kernels over peer memory (issue 6): one-shot / two-shot all-reduce (two-shot's
// first half for reduceScatter), the all-gather copy kernel (`p2p`) and copy engines (`ce`).
enum class PeerKind { kNone, kOneShot, kTwoShot, kCopyKernel, kCopyEngine };

struct ChoiceSpec {
  BufferMode buffers = BufferMode::kPlain;
  Composition compose = Composition::kDirect;
  int algo = -1;                    // abi::kAlgoTree / kAlgoRing, -1 = NCCL's own choice
  int proto = -1;                   // abi::kProtoLL / LL128 / Simple
  int ctas = 0;                     // > 0: a communicator with minCTAs = maxCTAs = ctas
  int p2p_chunk = 0;                // > 0: requested P2P chunk size (bytes)
  PeerKind peer = PeerKind::kNone;  // with compose == kPeer
  int blocks = 16;                  // peer kernels' grid and block
  int threads = 512;
  bool push = false;         // write into the peers (true) or read from them
  bool ll = false;           // oneshot mode=ll: flags travel with the data
  int unroll = 1;            // vectors in flight per thread (kernels::PeerShape)
  bool absent_test = false;  // test-absent: one rank never joins the kernel
  bool fused = false;        // oneshot-fused / twoshot-fused: the epilogue in the same launch
  std::string unsupported;   // non-empty: a known name this build cannot run, and why
};

inline constexpr int kCtasValues[] = {2, 4, 8, 16, 32};
inline constexpr int kMaxPeerBlocksParam = 256;     // kernels::kMaxPeerBlocks
inline constexpr int kMaxReduceThreadsParam = 512;  // kernels::kMaxReduceThreads
inline constexpr int kMaxUnrollParam = 2;           // kernels::kMaxUnroll
// One-shot moves (world-1) times the message into every rank: two-shot covers the sizes
// above this, so the sweep does not spend its time there.
inline constexpr std::uint64_t kOneShotMaxBytes = std::uint64_t{16} << 20;
// LL doubles the bytes on NVLink: worth it only while latency dominates.
inline constexpr std::uint64_t kLLMaxBytes = std::uint64_t{1} << 20;

// Strict: an unknown base or parameter value is InvalidArgument naming the allowed ones.
core::Result<ChoiceSpec> SpecFromChoice(const core::ChoiceName& choice);

// Most elements of a row one thread of a fused kernel keeps in registers (as fp32):
// kernels::kEpilogueFloatsPerThread.
inline constexpr int kFusedElementsPerThread = 32;

// Why peer kernel `s` cannot run `problem` over `world` ranks (op, dtype, redop, size
// and shape limits); empty when it can. Whether peer memory exists is the caller's to say.
std::string PeerSkipReason(const ChoiceSpec& s, const core::Problem& problem, int world);

}  // namespace ccltune::apply

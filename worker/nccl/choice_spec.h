// What an NCCL choice name means for the backend: which memory, which communicator, which
// forced algorithm/protocol, which composition. Pure C++ (no CUDA), so the catalog logic is
// testable on machines without a GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/choice.h"
#include "core/problem.h"
#include "core/status.h"
#include "worker/backend.h"

namespace ccltune::worker::nccl {

enum class BufferMode { kPlain, kRegistered, kSymmetric };
enum class Composition { kDirect, kReduceScatterAllGather, kBoundedSpin, kPeer };
// Our own kernels over peer memory (issue 6): one-shot / two-shot all-reduce (two-shot's
// first half for reduceScatter), the all-gather copy kernel (`p2p`) and copy engines (`ce`).
enum class PeerKind { kNone, kOneShot, kTwoShot, kCopyKernel, kCopyEngine };

struct ChoiceSpec {
  BufferMode buffers = BufferMode::kPlain;
  Composition compose = Composition::kDirect;
  int algo = -1;            // CcltuneTunerAlgo, -1 = NCCL's own choice
  int proto = -1;           // CcltuneTunerProto
  int ctas = 0;             // > 0: a communicator with minCTAs = maxCTAs = ctas
  int p2p_chunk = 0;        // > 0: requested P2P chunk size (bytes)
  PeerKind peer = PeerKind::kNone;  // with compose == kPeer
  int blocks = 16;                  // peer kernels' grid and block
  int threads = 512;
  bool push = false;                // write into the peers (true) or read from them
  bool ll = false;                  // oneshot mode=ll: flags travel with the data
  int unroll = 1;                   // vectors in flight per thread (kernels::PeerShape)
  bool absent_test = false;         // test-absent: one rank never joins the kernel
  std::string unsupported;  // non-empty: a known name this build cannot run, and why
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

// What the catalog needs to know about the running system.
struct CatalogContext {
  int world = 1;
  int nccl_version = 0;       // ncclGetVersion code, e.g. 22803
  bool tuner_loaded = false;  // the in-process tuner is NCCL's plugin
  std::string tuner_problem;  // why not, when not
  bool test_choices = false;  // CCLTUNE_ENABLE_TEST_CHOICES=1
  std::string peer_problem = "peer memory not probed";  // empty: peer kernels can run
};

// Every catalog choice for `op`, the default first.
std::vector<core::ChoiceName> CatalogChoices(core::Op op, const CatalogContext& ctx);
// Empty when `choice` can run for `problem` here; else the reason it is skipped.
std::string SkipReason(const core::ChoiceName& choice, const core::Problem& problem,
                       const CatalogContext& ctx);
// Backend::Candidates: the requested choices (or the catalog), default first, each with
// its skip reason.
std::vector<ChoiceCandidate> BuildCandidates(const core::Problem& problem,
                                             const CatalogContext& ctx);

}  // namespace ccltune::worker::nccl

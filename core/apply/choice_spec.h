// What a choice name of the NCCL backend means (docs/design.md §5): which memory, which
// communicator, which forced algorithm/protocol, which composition, which own kernel and
// its shape. Pure C++ (no CUDA): the worker's catalog, the runtime's dispatch table and
// their tests on machines without a GPU read names the same way.
#pragma once

#include <cstdint>
#include <string>

#include "core/base/status.h"
#include "core/plan/choice.h"
#include "core/plan/problem.h"

namespace ccltune::apply {

enum class BufferMode { kPlain, kRegistered, kSymmetric };
// kHierarchical (`hier`, issue 33): reduce-scatter inside each node over peer memory, NCCL
// all-reduce of each rank's shard across nodes on a communicator of the ranks with the same
// local rank (ncclCommSplit), all-gather inside the node.
enum class Composition { kDirect, kReduceScatterAllGather, kBoundedSpin, kPeer, kHierarchical };
// Our own kernels over peer memory (issue 6): one-shot / two-shot all-reduce (two-shot's
// first half for reduceScatter), the all-gather copy kernel (`p2p`) and copy engines (`ce`).
enum class PeerKind { kNone, kOneShot, kTwoShot, kCopyKernel, kCopyEngine };

// `nccl-net:…`: NCCL's network transport settings. NCCL 2.28.9 (tag v2.28.9-1) reads each
// through NCCL_PARAM (src/include/param.h:19-28: a function-local static filled at the first
// call, src/misc/param.cc:76-94), so once per process:
// - NCCL_SOCKET_NTHREADS, NCCL_NSOCKS_PERTHREAD (src/transport/net_socket.cc:140-141, read in
//   ncclNetSocketGetNsockNthread :289-339 at every listen/connect). Unset on a host that is
//   not AWS or GCP (the vendor file of the NIC), NCCL uses 0 helper threads (:301): the
//   proxy thread moves the data itself. At most 16 threads, 64 sockets (:134-135).
// - NCCL_BUFFSIZE (and NCCL_LL_/LL128_BUFFSIZE; src/init.cc:700-702), copied into each
//   communicator by computeBuffSizes (:708-732); Simple's chunk size follows from it.
// - NCCL_IB_QPS_PER_CONNECTION (src/transport/net_ib.cc:1215), used at every IB connect
//   (:1421, :1718); only with an IB/RoCE device.
// ncclConfig_t (src/nccl.h.in, ncclConfig_v22800) has none of them; what it does carry for
// the network is per communicator: netName (which network plugin), trafficClass, and
// nChannelsPerNetPeer, which NCCL reads only for send/recv to a remote peer
// (src/graph/paths.cc:837, ncclTopoGetNchannels for P2P channels), not for collectives'
// rings and trees. So each setting here needs rank processes of its own, started with
// NetSettingsEnv (process_setting.h). 0 = NCCL's own value.
struct NetSettings {
  int socket_threads = 0;
  int socks_per_thread = 0;
  std::uint64_t buff_size = 0;
  int ib_qps = 0;
  bool any() const {
    return socket_threads > 0 || socks_per_thread > 0 || buff_size > 0 || ib_qps > 0;
  }
};

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
  // staged=1: the call's input is copied into the runtime's peer memory first (and the
  // result out of it, where the kernel shares outputs: core/apply/staged.h), so a kernel
  // that reads or writes the peers' buffers runs on any buffer; its time includes the copies.
  bool staged = false;
  NetSettings net;          // nccl-net: process-level NCCL settings
  std::string unsupported;  // non-empty: a known name this build cannot run, and why
};

inline constexpr int kCtasValues[] = {2, 4, 8, 16, 32};
inline constexpr int kMaxPeerBlocksParam = 256;     // kernels::kMaxPeerBlocks
inline constexpr int kMaxReduceThreadsParam = 512;  // kernels::kMaxReduceThreads
inline constexpr int kMaxUnrollParam = 2;           // kernels::kMaxUnroll
inline constexpr int kMaxPeersParam = 8;            // kernels::kMaxPeers: ranks of one team
inline constexpr int kHeldVectorsParam = 4;         // kernels::kHeldVectors

// A one-shot pull in place holds its results in registers until every rank has read its
// buffer (the peers read what it then overwrites): whether `count` elements of `elem_bytes`
// fit its grid (kHeldVectorsParam 16-byte vectors per thread).
inline bool OneShotHoldsInPlace(const ChoiceSpec& s, std::uint64_t count, std::size_t elem_bytes) {
  const std::uint64_t lanes = 16 / elem_bytes;
  return count <= static_cast<std::uint64_t>(kHeldVectorsParam) * lanes *
                      static_cast<std::uint64_t>(s.blocks) * static_cast<std::uint64_t>(s.threads);
}
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

// Why our reducing kernels cannot reduce `problem`'s dtype and redop (empty: they can).
std::string OwnReductionSkipReason(const core::Problem& problem);

}  // namespace ccltune::apply

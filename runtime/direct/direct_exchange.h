// Captured calls on the program's own buffers across processes (issue 43, docs/design.md §5
// "direct"): the vLLM idea, made safe to replay at any time.
//
// While a stream is captured, a call that a staged pull kernel serves only takes a slot: a
// table in device memory that the captured kernel reads at every launch. Nothing else
// happens on the capturing thread (host bookkeeping; no CUDA call, no wait), so capture in
// PyTorch's global mode stays legal. This class's own thread, in relaxed capture mode, then
// posts the call's buffers to the peers over the node's Unix sockets (unix_channel.h) as
// the allocation's IPC handle and an offset, opens the peers' posts, and publishes the
// slot: entries first, then its `valid` word.
//
// Why a replay is always right: every launch votes (peer_kernels.h, DirectSlot). A rank
// votes for a slot only while it vouches for it: it holds every rank's mapping, and its
// own buffers lie in segments that are still the ones it posted. The votes travel with the
// kernel's first barrier, so every rank sees the same votes; only when all vote does any
// rank touch a peer's program buffer, otherwise every rank runs the staged path in the
// kernel (copy in, pull over the staging regions, copy out). So a replay before the posts
// completed, or with a peer that never posted, is staged and right.
//
// Why an address is never stale: a rank vouches only for buffers inside segments it
// registered (segment_registry.h). When the program frees a segment, the allocator
// deregisters it (PyTorch's hook calls ncclCommDeregister after cudaFree, before the
// address can be handed out again), and this rank withdraws every slot that used it
// before the call returns (Withdraw: synchronous). From then on its vote is "no" for
// those slots, so no rank reads through the old mapping; a withdrawn slot is never
// published again (its captured call stays staged; a new capture gets a new slot with the
// new segment). The peers hear that the segment is gone and close their mappings.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runtime/direct/direct_backend.h"
#include "runtime/direct/segment_registry.h"
#include "runtime/direct/unix_channel.h"

namespace ccltune::runtime::direct {

struct ExchangeConfig {
  std::string name;  // the communicator's, the same on every rank: sockets are "<name>/<rank>"
  // A secret every rank of the communicator got from rank 0 at init (through NCCL): a
  // datagram without it is dropped, so another process of the namespace that can reach the
  // sockets cannot have a rank map its memory or publish its addresses. kTokenBytes long.
  std::string token;
  int rank = 0;
  int world = 1;
  int max_slots = 0;
  int device = -1;  // the thread's CUDA device (-1: none, as in the unit tests)
  // How long a post is retried toward a peer whose socket is not bound yet.
  std::chrono::milliseconds send_deadline{30000};
};

struct CapturedCall {
  const void* in = nullptr;
  std::uint64_t in_bytes = 0;
  void* out = nullptr;
  std::uint64_t out_bytes = 0;
  std::uint64_t signature = 0;  // op, dtype, count, choice: every rank's must be equal
  bool may_direct = true;       // false for one-shot in place: readers and writer would race
};

inline constexpr std::size_t kTokenBytes = 32;  // 128 random bits as hex

class DirectExchange {
 public:
  static core::Result<std::unique_ptr<DirectExchange>> Start(
      ExchangeConfig config, std::unique_ptr<DirectBackend> backend);
  ~DirectExchange();
  DirectExchange(const DirectExchange&) = delete;
  DirectExchange& operator=(const DirectExchange&) = delete;

  // A slot for a call being captured (kernels::DirectSlot*), or null when every slot is
  // taken. Every rank captures the same calls in the same order, so slot k is the same call
  // everywhere (the signature check catches a mismatch).
  const void* Capture(const CapturedCall& call);
  // Slot k's state: "ready", "waiting for rank R", or why it stays staged.
  std::string State(int slot) const;
  int slots() const;

 private:
  struct Ref {
    std::uint64_t segment = 0;
    std::uint64_t offset = 0;  // from the allocation's base
  };
  struct Own {
    CapturedCall call;
    std::string why_not;  // empty: eligible
    Ref in, out;
    bool posted = false;
    bool withdrawn = false;
    std::string state = "waiting for the post";
  };
  struct Theirs {
    bool eligible = false;
    std::string why_not;
    std::uint64_t signature = 0;
    Ref in, out;
    std::string in_handle, out_handle;
    core::UniqueFd in_fd, out_fd;
  };
  struct Outgoing {
    int peer;
    std::string bytes;
    std::vector<std::uint64_t> segments;  // whose descriptors travel with it
    std::chrono::steady_clock::time_point deadline;
  };

  DirectExchange(ExchangeConfig config, std::unique_ptr<DirectBackend> backend,
                 UnixChannel channel);
  void Loop();
  void PostPending();
  void Post(int slot, Own& own);
  void SendPending();
  void Handle(Datagram d);
  void TryComplete(int slot);
  std::optional<std::uintptr_t> Mapped(int rank, const Ref& ref, const std::string& handle,
                                       const core::UniqueFd& fd, std::string* why);
  void OwnSegmentGone(const Segment& s);
  void PeerSegmentGone(int rank, std::uint64_t segment);
  void Queue(int peer, std::string bytes, std::vector<std::uint64_t> segments);
  std::string PeerName(int rank) const;
  void Log(int slot, const std::string& state);

  const ExchangeConfig config_;
  std::unique_ptr<DirectBackend> backend_;
  UnixChannel channel_;
  mutable std::mutex mu_;
  std::vector<Own> own_;                         // by slot
  std::map<int, std::map<int, Theirs>> theirs_;  // slot -> rank -> post
  std::set<int> incomplete_;
  std::vector<int> to_post_;
  std::map<std::uint64_t, Exported> exported_;  // our segments, by id
  std::map<std::pair<int, std::uint64_t>, std::uintptr_t> mapped_;
  std::set<std::pair<int, std::uint64_t>> gone_;
  std::map<int, std::vector<std::pair<int, std::uint64_t>>> uses_;  // slot -> peer segments
  std::vector<Outgoing> outgoing_;
  std::uint64_t listener_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: starts after everything above exists
};

}  // namespace ccltune::runtime::direct

// Threads of one process, each driving its own rank (nccl-tests -t N): before a call whose
// choice the peers' buffers would change, each posts its buffers for the clique's next
// round and waits, bounded, until every rank posted. Every rank then gets the same answer:
// every rank's buffers, or none (some rank's buffers are not reachable from every device,
// or some rank did not come in time). A round that runs out ends the exchanges of the
// clique for good, at that same round on every rank: the ranks never disagree about which
// choice ran a call, which would leave one in our kernel and a peer in NCCL's.
//
// Host memory and one lock per clique: nothing here touches the GPU, so a round costs the
// threads' skew, not a device synchronisation, and works while a stream is being captured.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/base/deadline.h"
#include "runtime/nccl_shim/rank_buffers.h"

namespace ccltune::shim {

class BufferBoard {
 public:
  struct Post {
    const void* send = nullptr;
    void* recv = nullptr;
    bool reachable = false;  // every device of the clique reaches both (CallReachable)
  };

  // The board of `clique` (RuntimeComm::clique): one per clique in the process, shared by
  // its ranks, gone with the last of them.
  static std::shared_ptr<BufferBoard> For(const std::string& clique, int world);

  explicit BufferBoard(int world) : world_(world) {}

  // Posts `mine` as `rank`'s for `round` (every rank counts its rounds alike) and waits
  // until every rank posted, the round was abandoned, or `deadline`.
  std::optional<RankBuffers> Exchange(int rank, std::uint64_t round, const Post& mine,
                                      core::Deadline deadline);

  // Whether the exchanges ended (a round ran out).
  bool Ended() const;

 private:
  struct Round {
    std::vector<Post> posts;
    int posted = 0;
    int read = 0;
    bool abandoned = false;
  };
  std::optional<RankBuffers> Answer(const Round& r) const;

  const int world_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::uint64_t, Round> rounds_;  // at most the rounds ranks are in at once
  std::uint64_t ended_at_ = std::numeric_limits<std::uint64_t>::max();
};

}  // namespace ccltune::shim

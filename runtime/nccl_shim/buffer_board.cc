// The clique's buffer exchange for threads of one process (buffer_board.h).
#include "runtime/nccl_shim/buffer_board.h"

#include <algorithm>

namespace ccltune::shim {

std::shared_ptr<BufferBoard> BufferBoard::For(const std::string& clique, int world) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<BufferBoard>> boards;
  std::lock_guard<std::mutex> lock(mu);
  // Cliques come and go with communicators: forget the boards no rank holds any more.
  for (auto it = boards.begin(); it != boards.end();) {
    it = it->second.expired() ? boards.erase(it) : std::next(it);
  }
  std::weak_ptr<BufferBoard>& slot = boards[clique];
  std::shared_ptr<BufferBoard> board = slot.lock();
  if (!board) {
    board = std::make_shared<BufferBoard>(world);
    slot = board;
  }
  return board;
}

std::optional<RankBuffers> BufferBoard::Answer(const Round& r) const {
  if (r.abandoned) return std::nullopt;
  RankBuffers b{std::vector<const void*>(world_), std::vector<void*>(world_)};
  for (int i = 0; i < world_; ++i) {
    if (!r.posts[i].reachable) return std::nullopt;
    b.send[i] = r.posts[i].send;
    b.recv[i] = r.posts[i].recv;
  }
  return b;
}

std::optional<RankBuffers> BufferBoard::Exchange(int rank, std::uint64_t round, const Post& mine,
                                                 core::Deadline deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  if (round > ended_at_ || rank < 0 || rank >= world_) return std::nullopt;
  Round& r = rounds_[round];  // std::map: stays put while other rounds come and go
  if (r.posts.empty()) r.posts.resize(world_);
  if (!r.abandoned) {
    r.posts[rank] = mine;
    if (++r.posted == world_) cv_.notify_all();
    cv_.wait_until(lock, deadline, [&] { return r.posted == world_ || r.abandoned; });
    if (r.posted < world_ && !r.abandoned) {
      // Decided under the lock: a rank that comes later reads "abandoned", never a full
      // round, so every rank answers this round alike.
      r.abandoned = true;
      ended_at_ = std::min(ended_at_, round);
      cv_.notify_all();
    }
  }
  std::optional<RankBuffers> answer = Answer(r);
  if (++r.read == world_) rounds_.erase(round);
  return answer;
}

bool BufferBoard::Ended() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ended_at_ != std::numeric_limits<std::uint64_t>::max();
}

}  // namespace ccltune::shim

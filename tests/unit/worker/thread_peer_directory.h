// TEST HELPER: an in-process PeerDirectory for ranks that run as threads of one test
// process (a mutex + condition variable map). Real ranks use the Redis-backed directory of
// worker/rendezvous; this one only lets host-backend tests and the host benchmark build
// meshes without Redis.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "worker/rendezvous/peer_directory.h"

namespace ccltune::worker::testing {

// The state all ranks share.
class ThreadPeerExchange {
 public:
  explicit ThreadPeerExchange(int world) : world_(world) {}

  core::Result<std::vector<std::string>> AllGather(const std::string& name, int rank,
                                                   const std::string& mine, Deadline deadline) {
    std::vector<int> everyone(world_);
    for (int r = 0; r < world_; ++r) everyone[r] = r;
    return AllGatherAmong(name, rank, mine, everyone, deadline);
  }

  // Waits for `members`' values only (members within the world).
  core::Result<std::vector<std::string>> AllGatherAmong(const std::string& name, int rank,
                                                        const std::string& mine,
                                                        const std::vector<int>& members,
                                                        Deadline deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    auto& slots = values_[name];
    slots.resize(world_);
    slots[rank] = mine;
    cv_.notify_all();
    const bool all = cv_.wait_until(lock, deadline, [&] {
      for (int r : members)
        if (!slots[r]) return false;
      return true;
    });
    if (!all) return core::TimeoutError("thread directory: not every rank published " + name);
    std::vector<std::string> out;
    for (int r : members) out.push_back(*slots[r]);
    return out;
  }

 private:
  int world_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::vector<std::optional<std::string>>> values_;
};

// One rank's view. `after_gather`, when set, runs once the values are known and before they
// are returned (tests inject stray connections there).
class ThreadPeerDirectory final : public PeerDirectory {
 public:
  ThreadPeerDirectory(ThreadPeerExchange& exchange, int rank) : ex_(exchange), rank_(rank) {}

  core::Result<std::vector<std::string>> AllGather(const std::string& name, const std::string& mine,
                                                   Deadline deadline) override {
    auto all = ex_.AllGather(name, rank_, mine, deadline);
    if (all.ok() && after_gather) after_gather(name, *all);
    return all;
  }
  core::Result<std::vector<std::string>> AllGatherAmong(const std::string& name,
                                                        const std::string& mine,
                                                        const std::vector<int>& members,
                                                        Deadline deadline) override {
    return ex_.AllGatherAmong(name, rank_, mine, members, deadline);
  }
  core::Result<std::string> Broadcast(const std::string& name, int root,
                                      const std::optional<std::string>& value,
                                      Deadline deadline) override {
    auto all = ex_.AllGather(name, rank_, value.value_or(""), deadline);
    if (!all.ok()) return all.status();
    return (*all)[root];
  }

  std::function<void(const std::string&, const std::vector<std::string>&)> after_gather;

 private:
  ThreadPeerExchange& ex_;
  int rank_;
};

}  // namespace ccltune::worker::testing

// Teardown of communicators whose ranks all live in one process (nccl-tests' threads,
// ncclCommInitAll, one thread driving several GPUs). Such programs destroy their
// communicators one after another from one thread, so a rank's teardown may not wait for
// its peers: they only arrive after it returns. Yet no rank's memory may be freed while a
// peer of the process could still read it. So each rank's context is parked here when its
// communicator goes away, and the last rank of the clique to arrive takes every context of
// it, to free them together once the GPUs are idle. Nothing here waits.
//
// A clique is named by a key all its ranks agreed on at init (rank 0's process token and
// context address). Header-only and free of CUDA, so its rule is tested without a GPU.
// Thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ccltune::runtime {

template <class T>
class CliqueParking {
 public:
  // Parks `item`, one of `world` ranks of clique `key`. Returns every item of the clique
  // (`item` among them) when this was the last rank to arrive, nothing otherwise.
  std::vector<std::unique_ptr<T>> Park(const std::string& key, int world, std::unique_ptr<T> item) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::unique_ptr<T>>& parked = cliques_[key];
    parked.push_back(std::move(item));
    if (static_cast<int>(parked.size()) < world) return {};
    std::vector<std::unique_ptr<T>> all = std::move(parked);
    cliques_.erase(key);
    return all;
  }

  // Ranks parked and waiting for the rest of their clique (for tests and summaries).
  std::size_t Waiting(const std::string& key) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cliques_.find(key);
    return it == cliques_.end() ? 0 : it->second.size();
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::vector<std::unique_ptr<T>>> cliques_;
};

}  // namespace ccltune::runtime

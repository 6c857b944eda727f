// A rate-limited work queue of object keys ("namespace/name") with client-go semantics:
// a key is queued at most once (dedup), is never handed to two workers at once (a key
// re-added while processing is queued again when Done), and failures are retried with
// per-key exponential back-off. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace ccltune::controller {

class WorkQueue {
 public:
  using Duration = std::chrono::steady_clock::duration;
  WorkQueue(Duration base_delay = std::chrono::milliseconds(50),
            Duration max_delay = std::chrono::seconds(60))
      : base_(base_delay), max_(max_delay) {}

  void Add(const std::string& key);
  void AddAfter(const std::string& key, Duration delay);
  // Re-adds after this key's next back-off delay (doubles per failure).
  void AddRateLimited(const std::string& key);
  // Resets the key's back-off (call after a successful reconcile).
  void Forget(const std::string& key);
  // Blocks until a key is ready or `timeout` passes (nullopt), or the queue shuts down.
  std::optional<std::string> Get(Duration timeout);
  void Done(const std::string& key);
  void ShutDown();
  size_t Len();

 private:
  void PromoteDueLocked(std::chrono::steady_clock::time_point now);

  Duration base_, max_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::set<std::string> dirty_, processing_;
  std::multimap<std::chrono::steady_clock::time_point, std::string> delayed_;
  std::map<std::string, int> failures_;
  bool shutdown_ = false;
};

}  // namespace ccltune::controller

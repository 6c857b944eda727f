#include "controller/machinery/work_queue.h"

#include <algorithm>

namespace ccltune::controller {

using SteadyClock = std::chrono::steady_clock;

void WorkQueue::Add(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (shutdown_ || dirty_.count(key)) return;
  dirty_.insert(key);
  // A key being processed is queued again by Done, so no two workers hold it at once.
  if (!processing_.count(key)) queue_.push_back(key);
  cv_.notify_one();
}

void WorkQueue::AddAfter(const std::string& key, Duration delay) {
  if (delay <= Duration::zero()) return Add(key);
  std::lock_guard<std::mutex> lock(mu_);
  if (shutdown_) return;
  delayed_.emplace(SteadyClock::now() + delay, key);
  cv_.notify_one();
}

void WorkQueue::AddRateLimited(const std::string& key) {
  Duration delay;
  {
    std::lock_guard<std::mutex> lock(mu_);
    int n = failures_[key]++;
    delay = base_ * (1LL << std::min(n, 20));
    delay = std::min(delay, max_);
  }
  AddAfter(key, delay);
}

void WorkQueue::Forget(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  failures_.erase(key);
}

void WorkQueue::PromoteDueLocked(SteadyClock::time_point now) {
  while (!delayed_.empty() && delayed_.begin()->first <= now) {
    std::string key = delayed_.begin()->second;
    delayed_.erase(delayed_.begin());
    if (dirty_.count(key)) continue;
    dirty_.insert(key);
    if (!processing_.count(key)) queue_.push_back(key);
  }
}

std::optional<std::string> WorkQueue::Get(Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  auto give_up = SteadyClock::now() + timeout;
  while (!shutdown_) {
    auto now = SteadyClock::now();
    PromoteDueLocked(now);
    if (!queue_.empty()) {
      std::string key = queue_.front();
      queue_.pop_front();
      dirty_.erase(key);
      processing_.insert(key);
      return key;
    }
    if (now >= give_up) return std::nullopt;
    auto wake = give_up;
    if (!delayed_.empty()) wake = std::min(wake, delayed_.begin()->first);
    cv_.wait_until(lock, wake);
  }
  return std::nullopt;
}

void WorkQueue::Done(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  processing_.erase(key);
  if (dirty_.count(key)) {
    queue_.push_back(key);
    cv_.notify_one();
  }
}

void WorkQueue::ShutDown() {
  std::lock_guard<std::mutex> lock(mu_);
  shutdown_ = true;
  cv_.notify_all();
}

size_t WorkQueue::Len() {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

}  // namespace ccltune::controller

#include "core/telemetry/stoppable_thread.h"

namespace ccltune::telemetry {

bool StopSignal::WaitFor(std::chrono::steady_clock::duration d) const {
  std::unique_lock<std::mutex> lock(mu_);
  return wake_.wait_for(lock, d, [&] { return stop_; });
}

bool StopSignal::Requested() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stop_;
}

StoppableThread::StoppableThread(Body body) : signal_(std::make_shared<StopSignal>()) {
  thread_ = std::thread([signal = signal_, body = std::move(body)] {
    body(*signal);
    std::lock_guard<std::mutex> lock(signal->mu_);
    signal->done_ = true;
    signal->wake_.notify_all();
  });
}

StoppableThread::~StoppableThread() { Stop(std::chrono::steady_clock::now()); }

bool StoppableThread::Stop(std::chrono::steady_clock::time_point deadline) {
  if (!thread_.joinable()) return true;
  std::unique_lock<std::mutex> lock(signal_->mu_);
  signal_->stop_ = true;
  signal_->wake_.notify_all();
  const bool ended = signal_->wake_.wait_until(lock, deadline, [&] { return signal_->done_; });
  lock.unlock();
  if (ended) {
    thread_.join();
  } else {
    thread_.detach();
  }
  return ended;
}

}  // namespace ccltune::telemetry

// StoppableThread: a thread that is asked to stop and waited for only until a deadline, so
// that shutdown at exit is bounded (2 s, ccltune_telemetry.h) even when the thread sits in a
// blocking call it cannot leave (a push to a Pushgateway that does not answer: libcurl under
// prometheus-cpp 1.0.1 has no timeout). A thread not done by the deadline is detached; what
// its body uses must then outlive it (the library's state is never freed, see c_api.cc).
// Thread-safety: Stop from one thread; the body's StopSignal from the thread itself.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace ccltune::telemetry {

class StopSignal {
 public:
  // Sleeps up to `d`; true when stop was asked (at once if it already was).
  bool WaitFor(std::chrono::steady_clock::duration d) const;
  bool Requested() const;

 private:
  friend class StoppableThread;
  mutable std::mutex mu_;
  mutable std::condition_variable wake_;
  bool stop_ = false;
  bool done_ = false;
};

class StoppableThread {
 public:
  using Body = std::function<void(const StopSignal&)>;
  explicit StoppableThread(Body body);
  ~StoppableThread();  // Stop(now): never blocks
  StoppableThread(const StoppableThread&) = delete;
  StoppableThread& operator=(const StoppableThread&) = delete;

  // True when the body returned by `deadline` (the thread is joined), else it is detached.
  bool Stop(std::chrono::steady_clock::time_point deadline);

 private:
  std::shared_ptr<StopSignal> signal_;
  std::thread thread_;
};

}  // namespace ccltune::telemetry

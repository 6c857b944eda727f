// A TCP server on 127.0.0.1 that accepts connections and never answers: a Redis that hangs
// (a stopped process, a black-holed route). Connections are held until destruction.
#pragma once

#include <atomic>
#include <thread>
#include <vector>

namespace ccltune::testing {

class SilentListener {
 public:
  SilentListener();  // port() == 0 when no socket could be bound
  ~SilentListener();
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;
  int port() const { return port_; }
  int accepted() const { return accepted_.load(); }

 private:
  void AcceptLoop();
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::vector<int> clients_;
  std::thread thread_;
};

}  // namespace ccltune::testing

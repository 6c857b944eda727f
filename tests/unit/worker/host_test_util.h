// Shared scaffolding of the host-backend tests: N ranks as threads, each with its own
// HostBackend over a real TCP mesh on 127.0.0.1.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "tests/unit/worker/thread_peer_directory.h"
#include "worker/host/host_backend.h"

namespace ccltune::worker::testing {

// Runs fn(rank) on one thread per rank and joins them all.
inline void RunOnRanks(int n, const std::function<void(int)>& fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back(fn, r);
  for (auto& t : threads) t.join();
}

// A token a test can trip.
class FlagCancel final : public CancelToken {
 public:
  core::Status Check() const override {
    return tripped_ ? core::Aborted("rank 0 raised abort: test") : core::Status::Ok();
  }
  void Trip() { tripped_ = true; }

 private:
  std::atomic<bool> tripped_{false};
};

struct HostRanks {
  explicit HostRanks(int n) : world(n), exchange(n) {
    for (int r = 0; r < n; ++r) dirs.push_back(std::make_unique<ThreadPeerDirectory>(exchange, r));
    backends.resize(n);
  }
  // Builds every rank's backend concurrently; returns the statuses by rank.
  std::vector<core::Status> Create(const CancelToken& cancel,
                                   const host::HostBackendOptions& options = {},
                                   double timeout_s = 10) {
    std::vector<core::Status> st(world);
    RunOnRanks(world, [&](int r) {
      auto b =
          host::HostBackend::Create(r, world, *dirs[r], cancel, options, DeadlineIn(timeout_s));
      if (b.ok())
        backends[r] = std::move(b).value();
      else
        st[r] = b.status();
    });
    return st;
  }

  int world;
  ThreadPeerExchange exchange;
  std::vector<std::unique_ptr<ThreadPeerDirectory>> dirs;
  std::vector<std::unique_ptr<host::HostBackend>> backends;
};

}  // namespace ccltune::worker::testing

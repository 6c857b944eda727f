// Deadlines and cancellation: every wait in a worker has one of each. A wait loop polls its
// own progress, then the CancelToken (abort flag / lost peer, from Redis), then the clock.
#pragma once

#include <chrono>
#include <string>

#include "core/base/status.h"

namespace ccltune::core {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

inline Deadline DeadlineIn(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}
inline double SecondsLeft(Deadline d) {
  return std::chrono::duration<double>(d - Clock::now()).count();
}
inline bool Expired(Deadline d) { return Clock::now() >= d; }

// Thread-safe. Check() is cheap (reads state a background thread keeps current).
class CancelToken {
 public:
  virtual ~CancelToken() = default;
  // OK, or Aborted ("rank 1 raised abort: ...") / PeerLost ("rank 3 stopped heartbeating").
  virtual core::Status Check() const = 0;
};

// A token that never cancels: for tools and tests that run without a job.
class NeverCancel final : public CancelToken {
 public:
  core::Status Check() const override { return core::Status::Ok(); }
};

}  // namespace ccltune::core

// Events of a tuning run, for whoever watches it: the progress line, Prometheus metrics.
// Called on the rank's main thread; implementations must not block for long.
#pragma once

#include <cstddef>

#include "core/plan/problem.h"
#include "core/results/result.h"

namespace ccltune::worker {

class BenchObserver {
 public:
  virtual ~BenchObserver() = default;
  virtual void OnPreSync(double /*wait_seconds*/, double /*skew_seconds*/) {}
  virtual void OnPreSyncTimeout() {}
  virtual void OnBarrier(double /*seconds*/) {}
  // A choice finished measuring (any status; skipped choices too).
  virtual void OnChoice(const core::Problem& /*problem*/, const core::ChoiceResult& /*result*/,
                        int /*world_size*/) {}
  // The winner of a problem was chosen.
  virtual void OnRecord(const core::ResultRecord& /*record*/) {}
  virtual void OnProblemDone(std::size_t /*index*/, std::size_t /*total*/) {}
  virtual void OnFinished(double /*tuning_seconds*/, bool /*ok*/) {}
};

}  // namespace ccltune::worker

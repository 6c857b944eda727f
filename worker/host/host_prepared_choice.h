// One host algorithm bound to one problem: owns its buffer sets (rotated while they fit the
// cache budget), runs warm-up and timed rounds, and verifies a run on fresh data against the
// host reference computed from every rank's regenerable input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/plan/problem.h"
#include "worker/host/algorithms.h"
#include "worker/host/data_gen.h"
#include "worker/rank/backend.h"

namespace ccltune::worker::host {

class HostPreparedChoice final : public PreparedChoice {
 public:
  HostPreparedChoice(HostComm& comm, const Algorithm& algo, const core::Problem& problem,
                     std::size_t count, ReduceFn reduce, std::size_t cache_budget_bytes,
                     double added_op_seconds = 0);

  core::Status Warmup(int iters, Deadline deadline) override;
  core::Result<double> TimedRound(int iters, Deadline deadline) override;
  core::Status Verify(Deadline deadline) override;

  std::size_t buffer_sets() const { return sets_.size(); }

 private:
  struct BufferSet {
    std::vector<std::byte> send, recv;
  };
  core::Status RunOnce(BufferSet& set, Deadline deadline);
  std::uint64_t SeedFor(int rank, std::uint64_t generation) const;

  HostComm& comm_;
  const Algorithm& algo_;
  // Added to every op's measured time, never slept (tests only: test-slow, test-env).
  double added_op_seconds_;
  core::Problem problem_;
  std::size_t count_;
  ReduceFn reduce_;
  std::vector<BufferSet> sets_;
  std::size_t next_set_ = 0;
  std::uint64_t verify_runs_ = 0;
};

}  // namespace ccltune::worker::host

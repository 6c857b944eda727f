// Rank 0's progress, written to Redis for the launcher's progress line and for operators:
// "{done} {total} {last problem}". A write that fails past the client's reconnect deadline
// means the cache is lost: it ends the attempt through JobControl (docs/design.md §3).
#pragma once

#include "core/redis/job_keys.h"
#include "core/redis/redis_client.h"
#include "worker/rank/bench_observer.h"
#include "worker/rendezvous/job_control.h"

namespace ccltune::worker {

class ProgressPublisher final : public BenchObserver {
 public:
  ProgressPublisher(core::RedisClient& redis, JobControl& control, const core::JobKeys& keys,
                    std::size_t total);
  void OnRecord(const core::ResultRecord& record) override;
  void OnProblemDone(std::size_t index, std::size_t total) override;

 private:
  void Write(const std::string& value);

  core::RedisClient& redis_;
  JobControl& control_;
  const core::JobKeys& keys_;
  std::string last_;
};

}  // namespace ccltune::worker

// Rank 0's progress, written to Redis for the launcher's progress line and for operators:
// "{done} {total} {last problem}". Best effort: a Redis hiccup only delays the line.
#pragma once

#include "core/redis/job_keys.h"
#include "core/redis/redis_client.h"
#include "worker/rank/bench_observer.h"

namespace ccltune::worker {

class ProgressPublisher final : public BenchObserver {
 public:
  ProgressPublisher(core::RedisClient& redis, const core::JobKeys& keys, std::size_t total);
  void OnRecord(const core::ResultRecord& record) override;
  void OnProblemDone(std::size_t index, std::size_t total) override;

 private:
  core::RedisClient& redis_;
  const core::JobKeys& keys_;
  std::string last_;
};

}  // namespace ccltune::worker

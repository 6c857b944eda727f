// What the controller reads from and deletes in Redis for a job (docs/design.md §3 key layout via
// core::JobKeys): the attempt summary rank 0 writes, rendezvous progress, and the job's keys
// for the finalizer. The controller's own Redis password comes from its environment
// (CCLTUNE_REDIS_PASSWORD, set from a Secret by the Deployment), so it needs no RBAC on
// Secrets. Each call connects, runs bounded commands and disconnects: calls are rare
// (once per finished attempt or deleted job) and this keeps the class thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/base/status.h"

namespace ccltune::controller {

struct AttemptProgress {
  long long joined = 0;   // ranks that joined the rendezvous
  long long presync = 0;  // ranks that passed the pre-sync window
};

class JobRedis {
 public:
  // `own_password`: the controller's own (CCLTUNE_REDIS_PASSWORD), for the default Redis.
  explicit JobRedis(std::string own_password) : own_password_(std::move(own_password)) {}
  const std::string& own_password() const { return own_password_; }
  // `password` is the job's (JobRedisPassword). NotFound when the attempt wrote no
  // summary; Unavailable when Redis cannot be reached.
  core::Result<nlohmann::json> ReadSummary(const std::string& url, const std::string& password,
                                           const std::string& job_id, int attempt);
  core::Result<AttemptProgress> Progress(const std::string& url, const std::string& password,
                                         const std::string& job_id, int attempt);
  // Marks the job cancelled (JobKeys::Cancelled, left to its TTL), then SCAN + DEL of every
  // key of every attempt of the job; returns how many were deleted.
  core::Result<long long> DeleteJobKeys(const std::string& url, const std::string& password,
                                        const std::string& job_id);

 private:
  std::string own_password_;
};

}  // namespace ccltune::controller

// Redis keys of one attempt (docs/design.md §3): ccltune:v1:job:{jobId}:{attempt}:{suffix}.
// Every key of an attempt gets a TTL so Redis does not fill with dead jobs.
#pragma once

#include <string>

namespace ccltune::core {

class JobKeys {
 public:
  JobKeys(std::string job_id, int attempt);
  const std::string& prefix() const { return prefix_; }  // "ccltune:v1:job:{id}:{attempt}:"
  const std::string& job_id() const { return job_id_; }
  int attempt() const { return attempt_; }

  std::string Rank(int rank) const;                     // join record (JSON)
  std::string Joined() const;                           // set of joined ranks
  std::string Exchange(const std::string& name) const;  // hash rank -> value
  std::string PreSync() const;                          // hash rank -> arrival (Redis TIME seconds)
  std::string Heartbeat(int rank) const;                // string with PX expiry
  std::string Abort() const;                            // first abort reason wins (SET NX)
  std::string Progress() const;                         // "done total label"
  std::string Published() const;                        // set once by rank 0 after the publish
  std::string Summary() const;                          // rank 0's report JSON (for the launcher)
  std::string Failure() const;                          // why the attempt failed (first wins)
  // Set when the job is no longer wanted (its `ccltune tune` got SIGINT/SIGTERM, or its
  // resource was deleted): rank 0's publish checks it atomically (docs/design.md §3). Per job,
  // not per attempt, and outside JobPattern, so the controller's key cleanup leaves it to
  // expire on its own: "ccltune:v1:cancelled:{jobId}".
  std::string Cancelled() const;
  // Prefix for all keys of a job (every attempt), for cleanup by the controller.
  static std::string JobPattern(const std::string& job_id);

 private:
  std::string job_id_;
  int attempt_;
  std::string prefix_;
};

}  // namespace ccltune::core

// Rendezvous of the ranks of one attempt through Redis (docs/design.md §3): join, the exchanges a
// backend needs (PeerDirectory), and the one pre-sync window before benchmarking.
// Not thread-safe: used from the rank's main thread. Every call blocks until its deadline
// at most. All keys it writes expire after `key_ttl_seconds`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/redis/job_keys.h"
#include "core/redis/redis_client.h"
#include "worker/rendezvous/peer_directory.h"
#include "worker/rendezvous/rank_record.h"

namespace ccltune::worker {

struct PreSyncReport {
  double wait_seconds = 0;  // this rank: from its arrival until it saw every rank arrive
  double skew_seconds = 0;  // last arrival - first arrival, on Redis TIME
};

class Rendezvous final : public PeerDirectory {
 public:
  Rendezvous(core::RedisClient& redis, core::JobKeys keys, int rank, int world_size,
             const CancelToken& cancel, int key_ttl_seconds = 3600);

  // Writes this rank's record and waits until all ranks joined. Timeout lists the missing.
  core::Result<std::vector<RankRecord>> Join(const RankRecord& self, Deadline deadline);

  // Every rank checks in; all must arrive within `window_seconds` of the first arrival
  // (measured on Redis TIME) or the attempt fails with PreSyncTimeout naming the late ranks.
  core::Result<PreSyncReport> PreSync(double window_seconds, Deadline deadline);

  core::Result<std::vector<std::string>> AllGather(const std::string& name, const std::string& mine,
                                                   Deadline deadline) override;
  core::Result<std::string> Broadcast(const std::string& name, int root,
                                      const std::optional<std::string>& value,
                                      Deadline deadline) override;
  core::Result<std::vector<std::string>> AllGatherAmong(const std::string& name,
                                                        const std::string& mine,
                                                        const std::vector<int>& members,
                                                        Deadline deadline) override;

  // Free-form notes between ranks (e.g. why a choice was wrong on this rank).
  core::Status PutNote(const std::string& name, const std::string& value);
  core::Result<std::vector<std::string>> Notes(const std::string& name);

  const core::JobKeys& keys() const { return keys_; }

 private:
  core::Status Expire(const std::string& key);
  core::Result<std::vector<int>> MissingRanks(const std::vector<std::string>& list_command);

  core::RedisClient& redis_;
  core::JobKeys keys_;
  int rank_;
  int world_;
  const CancelToken& cancel_;
  int ttl_;
};

// "2, 3" — for messages that name ranks.
std::string JoinRanks(const std::vector<int>& ranks);

}  // namespace ccltune::worker

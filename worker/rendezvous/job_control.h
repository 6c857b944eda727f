// The control plane of one rank: a background thread that heartbeats this rank into Redis
// and watches the attempt's abort flag, failure flag and the other ranks' heartbeats, so
// that every wait of the rank (a CancelToken) ends early when the attempt is doomed.
// Thread-safe: Check() from any thread; the rest from the rank's main thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/redis/job_keys.h"
#include "core/redis/redis_client.h"
#include "worker/deadline.h"

namespace ccltune::worker {

// How long a rank (and `ccltune tune`) tolerates an unreachable Redis before the attempt is
// failed as "lost the Redis cache": long enough to ride out a restart, and one bound for the
// whole job, not one per Redis call (docs/design.md §3).
inline constexpr double kRedisLostAfterSeconds = 10;

// The one line of a lost cache, for the ranks and `ccltune tune` alike: "lost the Redis cache
// at redis://HOST:PORT/DB while <activity>: unreachable for N s (<cause>)".
std::string RedisLostMessage(const core::RedisEndpoint& endpoint, const std::string& activity,
                             double unreachable_seconds, const core::Status& cause);

struct JobControlOptions {
  double heartbeat_interval_seconds = 0.5;
  double heartbeat_ttl_seconds = 3.0;
  // A peer whose heartbeat key stays missing this long is declared lost. Longer than a
  // beat interval so that a Redis restart (which drops every key) is ridden out.
  double peer_lost_after_seconds = 1.5;
  int key_ttl_seconds = 3600;
  double redis_lost_after_seconds = kRedisLostAfterSeconds;
};

class JobControl final : public CancelToken {
 public:
  // Starts the heartbeat thread on its own Redis connection.
  static core::Result<std::unique_ptr<JobControl>> Start(const core::RedisEndpoint& endpoint,
                                                         core::JobKeys keys, int rank,
                                                         int world_size,
                                                         JobControlOptions options = {});
  ~JobControl() override;

  // OK, or Aborted (this epoch's abort flag is up), or the attempt's failure / a lost peer.
  core::Status Check() const override;

  // The attempt-level failure (a lost peer, another rank's failure), OK if none.
  core::Status Fatal() const;
  // Stop judging peers by their heartbeats (they exit once the attempt is done).
  void StopWatchingPeers() { watch_peers_ = false; }
  // Begin watching peers' heartbeats (after the rendezvous: before it, ranks may not exist).
  void WatchPeers();
  // Choice-level abort: tells every rank to give up the current epoch's collective.
  core::Status RaiseAbort(int epoch, const std::string& reason);
  // Moves to a new epoch: its abort flag is down until someone raises it.
  void SetEpoch(int epoch);
  int epoch() const { return epoch_.load(); }
  // What this rank is doing, for the message of a lost cache ("tuning problem 4 of 13 ...").
  void SetActivity(std::string what);
  // A Redis call of the main thread failed after its own reconnect deadline: the cache is
  // lost; every wait of the rank ends with a message naming Redis, its URL and the activity.
  void ReportRedisError(const core::Status& error);
  bool RedisLost() const { return redis_lost_.load(); }
  // Attempt-level failure: first writer wins; every rank's Check() then fails with it.
  // Returns the failure that won (ours, or an earlier one of another rank).
  std::string RaiseFailure(const std::string& message);

 private:
  JobControl(std::unique_ptr<core::RedisClient> redis,
             std::unique_ptr<core::RedisClient> caller_redis, core::JobKeys keys, int rank,
             int world, JobControlOptions options);
  void Loop();
  void Tick();
  void CheckPeers(const std::vector<bool>& present);
  void SetState(core::Status st);
  // Heartbeat thread: notes a Redis outcome; past the bound, the cache is declared lost.
  void NoteRedis(const core::Status& outcome);
  void DeclareRedisLost(const core::Status& error);
  double SecondsSinceRedisOk() const;

  std::unique_ptr<core::RedisClient> redis_;         // used by the thread only
  std::unique_ptr<core::RedisClient> caller_redis_;  // used by the main thread only
  core::JobKeys keys_;
  int rank_;
  int world_;
  JobControlOptions options_;
  std::atomic<int> epoch_{0};
  std::atomic<bool> watch_peers_{false};
  std::atomic<bool> stop_{false};
  std::atomic<int> aborted_epoch_{-1};
  std::atomic<bool> redis_lost_{false};
  // When the heartbeat thread last reached Redis (Clock ticks; read by ReportRedisError).
  std::atomic<Clock::rep> redis_ok_at_{Clock::now().time_since_epoch().count()};
  std::vector<Clock::time_point> peer_missing_since_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  core::Status fatal_;                 // guarded by mu_
  std::string abort_reason_;           // guarded by mu_
  std::string activity_ = "starting";  // guarded by mu_
  std::thread thread_;
};

}  // namespace ccltune::worker

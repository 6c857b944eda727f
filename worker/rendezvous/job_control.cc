#include "worker/rendezvous/job_control.h"

#include <cstdio>

#include "core/base/log.h"

namespace ccltune::worker {
namespace {
std::string AbortKey(const core::JobKeys& k, int epoch) {
  return k.Abort() + ":" + std::to_string(epoch);
}
}  // namespace

std::string RedisLostMessage(const core::RedisEndpoint& endpoint, const std::string& activity,
                             double unreachable_seconds, const core::Status& cause) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", unreachable_seconds);
  return "lost the Redis cache at " + endpoint.ToString() + " while " + activity +
         ": unreachable for " + seconds + " s (" + cause.message() + ")";
}

core::Result<std::unique_ptr<JobControl>> JobControl::Start(const core::RedisEndpoint& endpoint,
                                                            core::JobKeys keys, int rank,
                                                            int world_size,
                                                            JobControlOptions options) {
  core::RedisOptions ro;
  ro.command_timeout = std::chrono::milliseconds(2000);
  CCLTUNE_ASSIGN_OR_RETURN(auto caller, core::RedisClient::Connect(endpoint, ro));
  // The heartbeat thread gives up each call quickly: its own clock (NoteRedis) decides when
  // an unreachable Redis is lost, so one tick never blocks for the whole bound.
  ro.connect_timeout = std::chrono::milliseconds(1000);
  ro.reconnect_deadline = std::chrono::milliseconds(500);
  CCLTUNE_ASSIGN_OR_RETURN(auto watcher, core::RedisClient::Connect(endpoint, ro));
  std::unique_ptr<JobControl> jc(new JobControl(std::move(watcher), std::move(caller),
                                                std::move(keys), rank, world_size, options));
  jc->thread_ = std::thread([p = jc.get()] { p->Loop(); });
  return jc;
}

JobControl::JobControl(std::unique_ptr<core::RedisClient> redis,
                       std::unique_ptr<core::RedisClient> caller_redis, core::JobKeys keys,
                       int rank, int world, JobControlOptions options)
    : redis_(std::move(redis)),
      caller_redis_(std::move(caller_redis)),
      keys_(std::move(keys)),
      rank_(rank),
      world_(world),
      options_(options),
      peer_missing_since_(world, Clock::time_point{}) {}

JobControl::~JobControl() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

core::Status JobControl::Check() const {
  std::lock_guard lock(mu_);
  if (!fatal_.ok()) return fatal_;
  if (aborted_epoch_.load() == epoch_.load()) return core::Aborted(abort_reason_);
  return core::Status::Ok();
}

core::Status JobControl::Fatal() const {
  std::lock_guard lock(mu_);
  return fatal_;
}

void JobControl::WatchPeers() { watch_peers_ = true; }

void JobControl::SetEpoch(int epoch) { epoch_ = epoch; }

void JobControl::SetActivity(std::string what) {
  std::lock_guard lock(mu_);
  activity_ = std::move(what);
}

void JobControl::ReportRedisError(const core::Status& error) {
  if (error.code() != core::StatusCode::kUnavailable && error.code() != core::StatusCode::kTimeout)
    return;  // a refused command is the caller's error to report, not a lost cache
  DeclareRedisLost(error);
}

double JobControl::SecondsSinceRedisOk() const {
  const Clock::time_point ok_at{Clock::duration(redis_ok_at_.load())};
  return std::chrono::duration<double>(Clock::now() - ok_at).count();
}

void JobControl::DeclareRedisLost(const core::Status& error) {
  std::string activity;
  {
    std::lock_guard lock(mu_);
    activity = activity_;
  }
  redis_lost_ = true;
  SetState(core::Unavailable(
      RedisLostMessage(redis_->endpoint(), activity, SecondsSinceRedisOk(), error)));
}

void JobControl::NoteRedis(const core::Status& outcome) {
  if (outcome.ok()) {
    redis_ok_at_ = Clock::now().time_since_epoch().count();
    return;
  }
  if (SecondsSinceRedisOk() >= options_.redis_lost_after_seconds && !redis_lost_)
    DeclareRedisLost(outcome);
}

core::Status JobControl::RaiseAbort(int epoch, const std::string& reason) {
  {
    std::lock_guard lock(mu_);
    if (aborted_epoch_.load() != epoch) abort_reason_ = reason;
    aborted_epoch_ = epoch;
  }
  if (redis_lost_) return core::Status::Ok();  // nobody could read it; Check() fails anyway
  auto r = caller_redis_->Command({"SET", AbortKey(keys_, epoch), reason, "NX", "EX",
                                   std::to_string(options_.key_ttl_seconds)});
  return r.ok() ? core::Status::Ok() : r.status().WithContext("raise abort");
}

std::string JobControl::RaiseFailure(const std::string& message) {
  if (redis_lost_) return message;  // no Redis to record it in: do not wait for one
  auto r = caller_redis_->Command({"SET", keys_.Failure(), message, "NX", "GET", "EX",
                                   std::to_string(options_.key_ttl_seconds)});
  if (!r.ok()) {
    core::LogWarn("could not record the failure in Redis: " + r.status().ToString());
    return message;
  }
  return r->is_nil() ? message : r->str;  // SET ... GET returns the earlier value
}

void JobControl::SetState(core::Status st) {
  std::lock_guard lock(mu_);
  if (fatal_.ok()) fatal_ = std::move(st);
}

void JobControl::Loop() {
  const auto interval = std::chrono::duration<double>(options_.heartbeat_interval_seconds / 2);
  std::unique_lock lock(mu_);
  while (!stop_) {
    lock.unlock();
    Tick();
    lock.lock();
    cv_.wait_for(lock, interval, [this] { return stop_.load(); });
  }
}

// One pass: heartbeat, abort flag of the current epoch, failure flag, peers' heartbeats.
// A Redis error here is fatal only once Redis stayed unreachable for the bound (NoteRedis);
// a peer is only declared lost after its heartbeat stayed missing while ours could be written.
void JobControl::Tick() {
  const int epoch = epoch_.load();
  const auto ttl_ms = std::to_string(static_cast<int>(options_.heartbeat_ttl_seconds * 1000));
  auto hb = redis_->Command({"SET", keys_.Heartbeat(rank_), std::to_string(epoch), "PX", ttl_ms});
  NoteRedis(hb.status());
  if (!hb.ok()) return;
  std::vector<std::string> mget{"MGET", AbortKey(keys_, epoch), keys_.Failure()};
  for (int r = 0; r < world_; ++r) mget.push_back(keys_.Heartbeat(r));
  auto v = redis_->Command(mget);
  if (!v.ok() || v->elements.size() != mget.size() - 1) return;
  if (!v->elements[0].is_nil()) {
    std::lock_guard lock(mu_);
    if (aborted_epoch_.load() != epoch) abort_reason_ = v->elements[0].str;
    aborted_epoch_ = epoch;
  }
  if (!v->elements[1].is_nil()) SetState(core::Aborted(v->elements[1].str));
  if (!watch_peers_) return;
  std::vector<bool> present(world_);
  for (int r = 0; r < world_; ++r) present[r] = !v->elements[2 + r].is_nil();
  CheckPeers(present);
}

void JobControl::CheckPeers(const std::vector<bool>& present) {
  const auto now = Clock::now();
  for (int r = 0; r < world_; ++r) {
    if (present[r]) {
      peer_missing_since_[r] = Clock::time_point{};
      continue;
    }
    if (peer_missing_since_[r] == Clock::time_point{}) peer_missing_since_[r] = now;
    const double missing = std::chrono::duration<double>(now - peer_missing_since_[r]).count();
    if (missing >= options_.peer_lost_after_seconds) {
      SetState(core::PeerLost("rank " + std::to_string(r) + " stopped heartbeating (for " +
                              std::to_string(missing).substr(0, 4) +
                              " s): the process died or lost Redis"));
    }
  }
}

}  // namespace ccltune::worker

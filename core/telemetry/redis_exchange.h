// RedisExchange: the thread that posts this rank's sampled windows to Redis and reads the
// other ranks' (docs/design.md §13, rank_matcher.h). Off the program's threads and off the
// library's draining thread: every Redis call has a short timeout (kRedisTimeout), and a
// Redis that is slow or down only delays or loses splits, never records.
//
// Each round (kPollInterval): the ready windows' HSET key rank packed-times + EXPIRE key 60
// in one transaction, then every posted window's HGETALL in one transaction; a window is
// matched once all nranks fields are there, else given up after kMatchBound (its calls keep
// no split); at most kMaxOpenWindows are posted (the oldest go first). Redis down: one line,
// the open windows are forgotten, a reconnection is tried every kReconnectInterval.
// Thread-safety: Start/Stop from one thread; the sink is called on the exchange's thread.
// The collector and the sink must outlive the thread (a thread still in a Redis call at
// Stop's deadline is left to end by itself, within kRedisTimeout).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "core/redis/redis_client.h"
#include "core/telemetry/rank_matcher.h"
#include "core/telemetry/stoppable_thread.h"

namespace ccltune::telemetry {

inline constexpr std::chrono::milliseconds kRedisTimeout{500};
inline constexpr std::chrono::milliseconds kPollInterval{100};
inline constexpr std::chrono::seconds kMatchBound{10};
inline constexpr std::chrono::seconds kReconnectInterval{5};
inline constexpr int kWindowTtlSeconds = 60;

class RedisExchange {
 public:
  // Receives a window's matched calls and the rank they were recorded on.
  using Sink = std::function<void(std::vector<MatchedCall>, int rank)>;

  RedisExchange(core::RedisEndpoint endpoint, WindowCollector& collector, Sink sink);
  ~RedisExchange();  // Stop()s
  RedisExchange(const RedisExchange&) = delete;
  RedisExchange& operator=(const RedisExchange&) = delete;

  void Start();
  // Asks the thread to end and waits for it until `deadline`.
  void Stop(Clock::time_point deadline);

 private:
  struct State;  // the thread's own, shared with it: it may outlive this object (see Stop)
  std::shared_ptr<State> state_;
  std::unique_ptr<StoppableThread> thread_;
};

}  // namespace ccltune::telemetry

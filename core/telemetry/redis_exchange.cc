#include "core/telemetry/redis_exchange.h"

#include "core/base/log.h"

namespace ccltune::telemetry {

namespace {
struct Posted {
  Window window;
  Clock::time_point posted_at;
};
}  // namespace

struct RedisExchange::State {
  core::RedisEndpoint endpoint;
  WindowCollector& collector;
  RedisExchange::Sink sink;
  std::unique_ptr<core::RedisClient> client;
  Clock::time_point next_connect{};
  bool said_down = false;
  std::vector<Posted> posted;

  bool Connected(Clock::time_point now);
  void Lost(const core::Status& why);
  void Post(std::vector<Window> ready, Clock::time_point now);
  void Poll(Clock::time_point now);
  void Step();
};

bool RedisExchange::State::Connected(Clock::time_point now) {
  if (client != nullptr) return true;
  if (now < next_connect) return false;
  next_connect = now + kReconnectInterval;
  core::RedisOptions options;
  options.connect_timeout = options.command_timeout = kRedisTimeout;
  options.reconnect_deadline = std::chrono::milliseconds(0);  // reconnecting is ours to pace
  auto connected = core::RedisClient::Connect(endpoint, options);
  if (!connected.ok()) {
    Lost(connected.status());
    return false;
  }
  client = std::move(connected).value();
  return true;
}

void RedisExchange::State::Lost(const core::Status& why) {
  if (!said_down)
    core::LogWarn("telemetry: Redis at " + endpoint.ToString() + ": " + why.ToString() +
                  "; NCCL's calls get no sync-wait split while it cannot be reached");
  said_down = true;
  client.reset();
  posted.clear();
  collector.Clear();
}

void RedisExchange::State::Post(std::vector<Window> ready, Clock::time_point now) {
  std::vector<std::vector<std::string>> commands;
  for (const Window& w : ready) {
    const std::string key = WindowKey(w.comm.comm_hash, w.op, w.index);
    commands.push_back({"HSET", key, std::to_string(w.comm.rank), PackTimes(w.calls)});
    commands.push_back({"EXPIRE", key, std::to_string(kWindowTtlSeconds)});
  }
  auto r = client->Transaction(commands);
  if (!r.ok()) return Lost(r.status().WithContext("HSET"));
  for (Window& w : ready) posted.push_back({std::move(w), now});
  // Peers that never post (telemetry off on some rank) must not grow the polls: the oldest
  // windows go first.
  if (posted.size() > kMaxOpenWindows)
    posted.erase(posted.begin(), posted.end() - static_cast<std::ptrdiff_t>(kMaxOpenWindows));
}

// One round trip for every posted window (HGETALLs in one transaction): a window with all
// its ranks' fields is matched, one past kMatchBound given up.
void RedisExchange::State::Poll(Clock::time_point now) {
  std::vector<std::vector<std::string>> commands;
  for (const Posted& p : posted)
    commands.push_back(
        {"HGETALL", WindowKey(p.window.comm.comm_hash, p.window.op, p.window.index)});
  auto r = client->Transaction(commands);
  if (!r.ok() || r->elements.size() != posted.size())
    return Lost(r.ok() ? core::Internal("EXEC answered " + std::to_string(r->elements.size()) +
                                        " replies for " + std::to_string(posted.size()))
                       : r.status().WithContext("HGETALL"));
  std::vector<Posted> waiting;
  for (std::size_t i = 0; i < posted.size(); ++i) {
    const Window& w = posted[i].window;
    const auto& fields = r->elements[i].elements;  // field, value, field, value, ...
    if (fields.size() / 2 >= static_cast<std::size_t>(w.comm.nranks)) {
      std::vector<std::map<std::uint64_t, std::uint64_t>> ranks;
      for (std::size_t f = 1; f < fields.size(); f += 2)
        ranks.push_back(UnpackTimes(fields[f].str));
      sink(MatchCalls(w.calls, ranks), w.comm.rank);
    } else if (now - posted[i].posted_at < kMatchBound) {
      waiting.push_back(std::move(posted[i]));
    }
  }
  posted.swap(waiting);
}

void RedisExchange::State::Step() {
  const Clock::time_point now = Clock::now();
  std::vector<Window> ready = collector.TakeReady(now);
  if ((ready.empty() && posted.empty()) || !Connected(now)) return;
  if (!ready.empty()) Post(std::move(ready), now);
  if (client != nullptr && !posted.empty()) Poll(now);
}

RedisExchange::RedisExchange(core::RedisEndpoint endpoint, WindowCollector& collector, Sink sink)
    : state_(new State{std::move(endpoint), collector, std::move(sink)}) {}

RedisExchange::~RedisExchange() { Stop(Clock::now()); }

void RedisExchange::Start() {
  thread_ = std::make_unique<StoppableThread>([state = state_](const StopSignal& stop) {
    while (!stop.WaitFor(kPollInterval)) state->Step();
  });
}

void RedisExchange::Stop(Clock::time_point deadline) {
  if (thread_ != nullptr) thread_->Stop(deadline);
}

}  // namespace ccltune::telemetry

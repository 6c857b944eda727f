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
  void Post(Window window, Clock::time_point now);
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

void RedisExchange::State::Post(Window window, Clock::time_point now) {
  const std::string key = WindowKey(window.comm.comm_hash, window.index);
  auto r =
      client->Transaction({{"HSET", key, std::to_string(window.comm.rank), PackTimes(window.calls)},
                           {"EXPIRE", key, std::to_string(kWindowTtlSeconds)}});
  if (!r.ok()) return Lost(r.status().WithContext("HSET " + key));
  posted.push_back({std::move(window), now});
}

void RedisExchange::State::Poll(Clock::time_point now) {
  for (auto it = posted.begin(); it != posted.end();) {
    const Window& w = it->window;
    auto r = client->Command({"HGETALL", WindowKey(w.comm.comm_hash, w.index)});
    if (!r.ok()) return Lost(r.status().WithContext("HGETALL"));
    const auto& fields = r->elements;
    if (fields.size() / 2 >= static_cast<std::size_t>(w.comm.nranks)) {
      std::vector<std::map<std::uint64_t, std::uint64_t>> ranks;
      for (std::size_t i = 1; i < fields.size(); i += 2)
        ranks.push_back(UnpackTimes(fields[i].str));
      sink(MatchCalls(w.calls, ranks), w.comm.rank);
    } else if (now - it->posted_at < kMatchBound) {
      ++it;
      continue;
    }
    it = posted.erase(it);
  }
}

void RedisExchange::State::Step() {
  const Clock::time_point now = Clock::now();
  std::vector<Window> ready = collector.TakeReady(now);
  if ((!ready.empty() || !posted.empty()) && Connected(now)) {
    for (Window& w : ready)
      if (client != nullptr) Post(std::move(w), now);
    if (client != nullptr) Poll(now);
  }
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

#include "worker/launcher/launcher.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "core/base/counted.h"
#include "core/base/log.h"
#include "core/node/nccl_init_log.h"
#include "core/node/node_name.h"
#include "core/redis/job_keys.h"
#include "core/results/result.h"
#include "worker/launcher/cancel_signals.h"
#include "worker/launcher/local_redis.h"
#include "worker/launcher/redis_login.h"
#include "worker/launcher/report_table.h"
#include "worker/metrics/port_probe.h"
#include "worker/rendezvous/job_control.h"

namespace ccltune::worker {
namespace {

namespace fs = std::filesystem;

// The progress line, rewritten in place on a terminal, a line every few seconds otherwise;
// and the launcher's own watch on Redis: it polls twice a second on a client that gives up
// each call after 300 ms, so an unreachable cache is noticed within kRedisLostAfterSeconds
// while a restarted one is found again.
class ProgressLine {
 public:
  ProgressLine(std::unique_ptr<core::RedisClient> redis, const core::JobKeys& keys)
      : redis_(std::move(redis)), keys_(keys), tty_(::isatty(2)) {}
  static core::RedisOptions FastOptions() {
    core::RedisOptions o;
    o.connect_timeout = std::chrono::milliseconds(500);
    o.command_timeout = std::chrono::milliseconds(2000);
    o.reconnect_deadline = std::chrono::milliseconds(300);  // rides out no outage on its own
    return o;
  }
  void Tick() {
    const auto now = Clock::now();
    if (now < next_poll_) return;
    next_poll_ = now + std::chrono::milliseconds(tty_ ? 200 : 500);
    auto v = redis_->Command({"GET", keys_.Progress()});
    if (!v.ok()) {
      error_ = v.status();
      return;
    }
    ok_at_ = Clock::now();
    error_ = core::Status::Ok();
    if (v->is_nil()) return;
    latest_ = v->str;
    if (latest_ == last_ || (!tty_ && now < next_print_)) return;
    next_print_ = now + std::chrono::seconds(5);
    last_ = latest_;
    int done = 0, total = 0;
    char label[256] = {0};
    std::sscanf(last_.c_str(), "%d %d %255[^\n]", &done, &total, label);
    std::fprintf(stderr, tty_ ? "\r\033[K[%3d/%3d] %s" : "[%3d/%3d] %s\n", done, total, label);
    std::fflush(stderr);
  }
  void End() {
    if (tty_ && !last_.empty()) std::fprintf(stderr, "\n");
  }
  // Seconds since Redis last answered (0 while it does).
  double SecondsUnreachable() const {
    return error_.ok() ? 0 : std::chrono::duration<double>(Clock::now() - ok_at_).count();
  }
  std::string LostMessage() const {
    return RedisLostMessage(redis_->endpoint(), Activity(), SecondsUnreachable(), error_);
  }
  std::string Activity() const {
    if (latest_.empty()) return "running the ranks (no progress read yet)";
    int done = 0, total = 0;
    std::sscanf(latest_.c_str(), "%d %d", &done, &total);
    return "tuning (" + std::to_string(done) + " of " + core::Counted(total, "problem") + " done)";
  }
  core::RedisClient& redis() { return *redis_; }

 private:
  std::unique_ptr<core::RedisClient> redis_;
  const core::JobKeys& keys_;
  bool tty_;
  std::string last_;    // printed
  std::string latest_;  // read
  Clock::time_point next_poll_{}, next_print_{};
  Clock::time_point ok_at_ = Clock::now();
  core::Status error_;
};

std::string WriteJobFiles(const TuneOptions& o, const std::string& job_id) {
  const fs::path dir = fs::path(o.cache_dir) / "jobs" / job_id;
  fs::create_directories(dir);
  std::ofstream(dir / "plan.json") << core::PlanToJson(o.plan) << "\n";
  return dir.string();
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "ccltune tune: error: %s\n", message.c_str());
  return 1;
}

std::string FailureReason(ProgressLine& watch, const core::JobKeys& keys, int code) {
  auto f = watch.redis().Command({"GET", keys.Failure()});
  if (f.ok() && !f->is_nil()) return f->str;
  if (!f.ok() && f.status().code() != core::StatusCode::kFailedPrecondition) {
    // The ranks recorded why in a Redis that is gone: name that, not just an exit code.
    return "a rank exited with code " + std::to_string(code) + "; the Redis cache at " +
           watch.redis().endpoint().ToString() + " is unreachable (" + f.status().message() +
           ") while " + watch.Activity();
  }
  return "a rank exited with code " + std::to_string(code);
}

// "# search adaptive: screening 1.20 s (40 choices screened, 31 pruned), full measurements
// 5.10 s": where the adaptive search spent its time (-v lists each pruned choice and why).
void PrintSearchLine(const nlohmann::json& summary) {
  const auto& t = summary.at("timing");
  const nlohmann::json none = nlohmann::json::object();
  const auto& s = summary.contains("screening") ? summary.at("screening") : none;
  std::printf("# search %s: screening %.2f s (%s screened, %d pruned), full measurements %.2f s\n",
              summary.value("search", "exhaustive").c_str(), t.value("screeningS", 0.0),
              core::Counted(s.value("screened", 0), "choice").c_str(), s.value("pruned", 0),
              t.value("fullS", 0.0));
}

// What NCCL's log says about the communicators (attempt_summary's ncclTopology).
std::string NcclView(const nlohmann::json& topology) {
  if (topology.contains("problem")) return "NCCL's view unknown: " + topology.value("problem", "");
  return core::DescribeNcclTopology(topology) + " (NCCL's log)";
}

// "# nodes 2, 2 ranks per node; NCCL formed 2 node(s); P2P inside nodes; NET/Socket between
// them": the fingerprint's grouping, and on the nccl backend what NCCL's own log says.
void PrintNodesLine(const nlohmann::json& summary) {
  const nlohmann::json none = nlohmann::json::object();
  const auto& fp = summary.contains("fingerprintInfo") ? summary.at("fingerprintInfo") : none;
  std::string line = "# nodes " + std::to_string(fp.value("nodes", 0)) + ", " +
                     core::Counted(fp.value("gpusPerNode", 0), "rank") + " per node";
  if (summary.contains("ncclTopology")) line += "; " + NcclView(summary.at("ncclTopology"));
  std::printf("%s\n", line.c_str());
}

// "# nccl-net:socketThreads=4,socksPerThread=4: own rank processes, 41.2 s; NCCL formed 2
// node(s); …; NET/Socket 4 threads x 4 sockets": one line per process setting, with what NCCL
// said in its processes (or why they failed).
void PrintSettingLines(const nlohmann::json& summary) {
  if (!summary.contains("processSettings")) return;
  for (const auto& s : summary.at("processSettings")) {
    char head[64];
    std::snprintf(head, sizeof head, "%.1f s", s.value("seconds", 0.0));
    std::string line = "# " + s.value("name", "") + ": own rank processes, " + head;
    if (s.value("status", "") != "ok") {
      line += ", failed: " + s.value("reason", "");
    } else if (s.contains("ncclTopology")) {
      line += "; " + NcclView(s.at("ncclTopology"));
    }
    std::printf("%s\n", line.c_str());
  }
}

int PrintSummary(core::RedisClient& redis, const core::JobKeys& keys, const TuneOptions& o) {
  auto s = redis.Command({"GET", keys.Summary()});
  if (!s.ok() || s->is_nil()) return Fail("the job finished but left no summary in Redis");
  const auto summary = nlohmann::json::parse(s->str);
  std::vector<core::ResultRecord> records;
  for (const auto& j : summary.at("records")) {
    auto r = core::ResultFromJson(j);
    if (!r.ok()) return Fail("summary record: " + r.status().message());
    records.push_back(*r);
  }
  PrintResultsTable(stdout, records, o.verbose);
  const auto& ps = summary.at("presync");
  const auto& b = summary.at("barrier");
  std::printf("\n# %s: %s, backend %s, fingerprint %s, %s, %d published\n", keys.job_id().c_str(),
              core::Counted(o.ranks, "rank").c_str(), o.backend.c_str(),
              summary.value("fingerprint", "").c_str(),
              core::Counted(static_cast<long long>(records.size()), "problem").c_str(),
              summary.value("published", 0));
  std::printf(
      "# pre-sync wait %.3f ms median, %.3f ms max over ranks; skew %.3f ms; "
      "barrier %.1f us median, %.1f us max; tuning %.2f s\n",
      ps.value("waitMsMedian", 0.0), ps.value("waitMs", 0.0), ps.value("skewMs", 0.0),
      b.value("medianUs", 0.0), b.value("maxUs", 0.0), summary.at("timing").value("tuningS", 0.0));
  PrintSearchLine(summary);
  PrintNodesLine(summary);
  PrintSettingLines(summary);
  if (!o.json_file.empty()) std::ofstream(o.json_file) << summary.dump(2) << "\n";
  return 0;
}

}  // namespace

std::string RandomJobId() {
  std::random_device rd;
  std::mt19937_64 gen(rd() ^ static_cast<unsigned long long>(::getpid()));
  char buf[40];
  std::snprintf(buf, sizeof buf, "local-%016llx", static_cast<unsigned long long>(gen()));
  return buf;
}

namespace {

// The ranks serve /metrics on 0.0.0.0 (the worker's --metrics-bind default). Checked here,
// where the flag that gave the port is known, so the one line names it.
bool MetricsPortFree(const RankLaunch& l, int index, int rank) {
  const int port = l.metrics_port_base + index;
  const core::Status free = CheckPortFree("0.0.0.0", port);
  if (free.ok()) return true;
  std::fprintf(stderr, "ccltune: %s %d: %s; rank %d serves no /metrics\n",
               l.metrics_port_flag.c_str(), l.metrics_port_base, free.message().c_str(), rank);
  return false;
}

}  // namespace

core::Result<std::vector<ChildProcess>> SpawnRanks(const RankLaunch& l,
                                                   const std::vector<int>& ranks,
                                                   const std::string& report_file) {
  std::vector<ChildProcess> children;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    std::vector<std::string> argv{
        SelfExecutable(), "worker",          "--rank",       std::to_string(ranks[i]),
        "--local-rank",   std::to_string(i), "--world-size", std::to_string(l.world_size),
        "--job-id",       l.job_id,          "--attempt",    std::to_string(l.attempt),
        "--backend",      l.backend,         "--redis",      l.redis_url,
        "--plan",         l.plan_file};
    if (ranks[i] == 0 && !report_file.empty()) argv.insert(argv.end(), {"--report", report_file});
    // By index in `ranks`: a pod's ranks use the ports the controller declared for it;
    // for `ccltune tune` the index is the rank.
    if (l.metrics_port_base >= 0 && MetricsPortFree(l, static_cast<int>(i), ranks[i]))
      argv.insert(argv.end(), {"--metrics-port", std::to_string(l.metrics_port_base + i)});
    if (!l.pushgateway.empty()) argv.insert(argv.end(), {"--pushgateway", l.pushgateway});
    if (!l.publish) argv.push_back("--no-publish");
    if (l.metrics_linger_seconds > 0)
      argv.insert(argv.end(), {"--metrics-linger", std::to_string(l.metrics_linger_seconds)});
    std::map<std::string, std::string> env;
    if (!l.redis_password.empty()) env["CCLTUNE_REDIS_PASSWORD"] = l.redis_password;
    if (!l.node_name.empty()) env[core::kNodeNameEnv] = l.node_name;
    if (l.debug_log && std::getenv("CCLTUNE_LOG_LEVEL") == nullptr)
      env["CCLTUNE_LOG_LEVEL"] = "debug";
    // SIGKILL when the launcher goes, even by kill -9: a rank without its launcher must not
    // go on and publish a job nobody waits for.
    CCLTUNE_ASSIGN_OR_RETURN(auto child,
                             ChildProcess::Spawn(argv, SpawnOptions{env, {}, "", SIGKILL}));
    children.push_back(std::move(child));
  }
  return children;
}

void StopRanks(std::vector<ChildProcess>& children, double grace_seconds) {
  for (auto& c : children) c.Signal(SIGTERM);
  const Deadline deadline = DeadlineIn(grace_seconds);
  for (auto& c : children) {
    if (!c.Wait(deadline).ok()) c.Stop(0);  // SIGKILL, then reaped
  }
}

int SuperviseRanks(std::vector<ChildProcess>& children, const std::vector<int>& ranks,
                   double grace_seconds, const std::function<bool()>& stop_requested) {
  int first_failure = 0;
  std::optional<Deadline> kill_at;
  while (true) {
    bool all_done = true;
    for (auto& c : children) {
      auto code = c.Poll();
      if (!code)
        all_done = false;
      else if (*code != 0 && first_failure == 0)
        first_failure = *code;
    }
    if (all_done) return first_failure;
    if (first_failure != 0 && !kill_at) kill_at = DeadlineIn(grace_seconds);
    if (kill_at && Expired(*kill_at)) {
      for (std::size_t i = 0; i < children.size(); ++i)
        if (!children[i].Poll())
          std::fprintf(stderr, "ccltune: rank %d did not stop in time; killing it\n", ranks[i]);
      for (auto& c : children) c.Stop(0);
      return first_failure;
    }
    if (stop_requested && stop_requested()) {
      StopRanks(children, kStopGraceSeconds);
      return first_failure;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

namespace {

// After SIGINT/SIGTERM: marks the job cancelled first (so a publish racing the signal applies
// nothing), then the ranks are stopped.
void MarkCancelled(ProgressLine& watch, const core::JobKeys& keys, int sig) {
  auto r = watch.redis().Command(
      {"SET", keys.Cancelled(), "ccltune tune got " + CancelSignals::Name(sig), "EX", "3600"});
  if (!r.ok()) core::LogWarn("could not mark the job cancelled: " + r.status().message());
}

int Cancelled(ProgressLine& watch, const core::JobKeys& keys, int sig, int ranks, bool local) {
  auto published = watch.redis().Command({"EXISTS", keys.Published()});
  const bool none = published.ok() && published->integer == 0;
  std::fprintf(stderr, "ccltune tune: cancelled by %s: stopped %s%s; %s\n",
               CancelSignals::Name(sig).c_str(), core::Counted(ranks, "rank").c_str(),
               local ? " and the private Redis" : "",
               none ? "nothing was published"
                    : (published.ok() ? "the job had published its winners before the signal"
                                      : "whether it published is unknown (Redis unreachable)"));
  return 128 + sig;
}

struct Supervised {
  int code = 0;
  int signal = 0;          // the cancelling signal, if any
  std::string redis_lost;  // why the launcher gave up on Redis, if it did
};

Supervised Supervise(std::vector<ChildProcess>& children, const std::vector<int>& ranks,
                     const TuneOptions& o, ProgressLine& watch, const CancelSignals& signals,
                     const core::JobKeys& keys) {
  Supervised out;
  auto stop = [&] {
    watch.Tick();
    if ((out.signal = signals.received()) != 0) {
      MarkCancelled(watch, keys, out.signal);
      return true;
    }
    if (watch.SecondsUnreachable() >= kRedisLostAfterSeconds) {
      out.redis_lost = watch.LostMessage();
      return true;
    }
    return false;
  };
  out.code = SuperviseRanks(children, ranks, o.plan.benchmark.choice_timeout_seconds + 10, stop);
  watch.End();
  return out;
}

}  // namespace

int RunTune(const TuneOptions& o) {
  const CancelSignals signals;
  std::unique_ptr<LocalRedis> local;
  core::RedisEndpoint ep;
  if (o.redis) {
    ep = *o.redis;
  } else {
    auto started = LocalRedis::Start(o.cache_dir);
    if (!started.ok()) return Fail(started.status().message());
    local = std::move(started).value();
    ep = local->endpoint();
  }
  auto redis = ConnectCache(ep);
  if (!redis.ok()) return Fail(redis.status().message());
  auto fast = core::RedisClient::Connect(ep, ProgressLine::FastOptions());
  if (!fast.ok()) return Fail(fast.status().message());
  const std::string job_id = o.job_id.empty() ? RandomJobId() : o.job_id;
  const core::JobKeys keys(job_id, 0);
  const std::string dir = WriteJobFiles(o, job_id);
  core::RedisEndpoint no_password = ep;
  no_password.password.clear();
  RankLaunch launch{job_id,
                    0,
                    o.ranks,
                    o.backend,
                    no_password.ToString(),
                    ep.password,
                    dir + "/plan.json",
                    o.metrics_port_base,
                    o.pushgateway,
                    o.publish,
                    o.metrics_linger_seconds};
  launch.debug_log = o.verbose;
  std::vector<int> ranks(o.ranks);
  for (int r = 0; r < o.ranks; ++r) ranks[r] = r;
  std::fprintf(stderr, "ccltune tune: job %s, %s, backend %s, Redis %s\n", job_id.c_str(),
               core::Counted(o.ranks, "rank").c_str(), o.backend.c_str(), ep.ToString().c_str());
  ProgressLine watch(std::move(fast).value(), keys);
  if (int sig = signals.received(); sig != 0)
    return Cancelled(watch, keys, sig, 0, local != nullptr);
  auto children = SpawnRanks(launch, ranks, dir + "/summary.json");
  if (!children.ok()) return Fail(children.status().message());
  const Supervised done = Supervise(*children, ranks, o, watch, signals, keys);
  if (done.signal != 0) return Cancelled(watch, keys, done.signal, o.ranks, local != nullptr);
  if (!done.redis_lost.empty()) return Fail(done.redis_lost + "; stopped the ranks");
  if (done.code != 0) return Fail(FailureReason(watch, keys, done.code));
  return PrintSummary(**redis, keys, o);
}

}  // namespace ccltune::worker

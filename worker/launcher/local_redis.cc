#include "worker/launcher/local_redis.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace ccltune::worker {
namespace fs = std::filesystem;

std::string DefaultCacheDir() {
  if (const char* d = std::getenv("CCLTUNE_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/ccltune";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.cache/ccltune";
}

core::Result<core::RedisEndpoint> RedisFlagEndpoint(const std::string& url) {
  auto ep = core::ParseRedisUrl(url);
  if (!ep.ok()) return ep.status().WithContext("--redis");
  if (const char* pw = std::getenv("CCLTUNE_REDIS_PASSWORD"); pw && *pw) ep->password = pw;
  return ep;
}

core::Result<int> PickFreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return core::Unavailable("socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  ::close(fd);
  if (port <= 0) return core::Unavailable("no free loopback port");
  return port;
}

namespace {

// Who holds the lock, as its holder wrote it ("redis-server pid 123 of ccltune tune pid 120").
std::string LockHolder(int fd) {
  char buf[128] = {0};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string holder(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
  return holder.empty() ? "another process" : holder;
}

// The data directory's lock: an flock on `lock`, handed down to redis-server, so it is held
// as long as the server runs, even after the launcher crashed (docs/design.md §9). A server
// that is still shutting down (its launcher was killed) gets `wait_seconds` to let go.
core::Result<int> LockDataDir(const std::string& dir, double wait_seconds) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return core::Unavailable("cannot create " + dir + ": " + ec.message());
  const std::string lock = dir + "/lock";
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return core::Unavailable("cannot open " + lock);
  const Deadline deadline = DeadlineIn(wait_seconds);
  for (bool said = false; ::flock(fd, LOCK_EX | LOCK_NB) != 0; said = true) {
    // A wait of seconds, so it is said before it starts, with its bound.
    if (!said) {
      std::fprintf(stderr,
                   "ccltune: the private Redis in %s is in use by %s; waiting up to %.0f s for "
                   "it to end\n",
                   dir.c_str(), LockHolder(fd).c_str(), wait_seconds);
    }
    if (Expired(deadline)) {
      const std::string holder = LockHolder(fd);
      ::close(fd);
      return core::FailedPrecondition(
          "the private Redis in " + dir + " is in use by " + holder +
          "; wait for that job to end, or share one Redis between jobs with --redis URL");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return fd;
}

void RecordLockHolder(int fd, pid_t server) {
  const std::string holder = "redis-server pid " + std::to_string(server) +
                             " of ccltune tune pid " + std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, holder.data(), holder.size(), 0) < 0)
    return;  // the lock itself holds; only the message of a refused second tune is poorer
}

core::Status WaitForPing(const core::RedisEndpoint& ep, ChildProcess& proc, Deadline deadline) {
  core::RedisOptions o;
  o.connect_timeout = std::chrono::milliseconds(200);
  o.reconnect_deadline = std::chrono::milliseconds(0);
  while (!Expired(deadline)) {
    if (auto code = proc.Poll())
      return core::Unavailable("redis-server exited with code " + std::to_string(*code));
    auto c = core::RedisClient::Connect(ep, o);
    if (c.ok() && (*c)->Command({"PING"}).ok()) return core::Status::Ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return core::TimeoutError("redis-server did not answer PING within 10 s");
}

}  // namespace

core::Result<std::unique_ptr<LocalRedis>> LocalRedis::Start(const std::string& data_dir) {
  const std::string dir = data_dir + "/redis";
  CCLTUNE_ASSIGN_OR_RETURN(int lock_fd, LockDataDir(dir, kLockWaitSeconds));
  core::Status last = core::Unavailable("not started");
  for (int attempt = 0; attempt < 3; ++attempt) {  // a picked port can be taken meanwhile
    auto port = PickFreePort();
    if (!port.ok()) break;
    // SIGTERM (Redis flushes its append-only file) when the launcher goes, even by kill -9;
    // the server holds the directory's lock until it has exited.
    SpawnOptions bound;
    bound.parent_death_signal = SIGTERM;
    bound.keep_fd = lock_fd;
    auto proc = ChildProcess::Spawn(
        {"redis-server", "--port", std::to_string(*port), "--bind", "127.0.0.1", "--protected-mode",
         "yes", "--dir", dir, "--appendonly", "yes", "--save", "", "--daemonize", "no",
         "--loglevel", "warning", "--logfile", dir + "/redis.log"},
        bound);
    if (!proc.ok()) {
      ::close(lock_fd);
      return core::Unavailable(proc.status().message() +
                               " (install Debian's redis-server, or pass --redis URL)");
    }
    core::RedisEndpoint ep;
    ep.port = *port;
    RecordLockHolder(lock_fd, proc->pid());
    last = WaitForPing(ep, *proc, DeadlineIn(10));
    if (last.ok())
      return std::unique_ptr<LocalRedis>(new LocalRedis(std::move(proc).value(), ep, lock_fd));
  }
  ::close(lock_fd);
  return last.WithContext("starting the private redis-server (log: " + dir + "/redis.log)");
}

LocalRedis::LocalRedis(ChildProcess process, core::RedisEndpoint endpoint, int lock_fd)
    : process_(std::move(process)), endpoint_(std::move(endpoint)), lock_fd_(lock_fd) {}

LocalRedis::~LocalRedis() {
  process_.Stop(5);  // SIGTERM lets Redis flush its append-only file
  ::close(lock_fd_);
}

}  // namespace ccltune::worker

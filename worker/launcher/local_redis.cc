#include "worker/launcher/local_redis.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

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

core::Result<int> LockDataDir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return core::Unavailable("cannot create " + dir + ": " + ec.message());
  const std::string lock = dir + "/lock";
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return core::Unavailable("cannot open " + lock);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return core::FailedPrecondition(
        "another `ccltune tune` is using the private Redis in " + dir +
        "; wait for it, or share one Redis between jobs with --redis URL");
  }
  return fd;
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
  CCLTUNE_ASSIGN_OR_RETURN(int lock_fd, LockDataDir(dir));
  core::Status last = core::Unavailable("not started");
  for (int attempt = 0; attempt < 3; ++attempt) {  // a picked port can be taken meanwhile
    auto port = PickFreePort();
    if (!port.ok()) break;
    auto proc = ChildProcess::Spawn({"redis-server", "--port", std::to_string(*port), "--bind",
                                     "127.0.0.1", "--protected-mode", "yes", "--dir", dir,
                                     "--appendonly", "yes", "--save", "", "--daemonize", "no",
                                     "--loglevel", "warning", "--logfile", dir + "/redis.log"});
    if (!proc.ok()) {
      ::close(lock_fd);
      return core::Unavailable(proc.status().message() +
                               " (install Debian's redis-server, or pass --redis URL)");
    }
    core::RedisEndpoint ep;
    ep.port = *port;
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

#include "tests/support/redis_server.h"

#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <deque>
#include <fstream>
#include <thread>
#include <vector>

#include "tests/support/free_port.h"

namespace ccltune::testing {
namespace {

using Clock = std::chrono::steady_clock;
using core::Status;

std::vector<std::string> ServerArgs(const RedisServerOptions& o, const std::string& dir) {
  std::vector<std::string> args{"redis-server",
                                "--port",
                                std::to_string(o.port),
                                "--bind",
                                "127.0.0.1",
                                "--dir",
                                dir,
                                "--logfile",
                                dir + "/redis.log",
                                "--daemonize",
                                "no",
                                "--save",
                                "",
                                "--appendonly",
                                o.persist ? "yes" : "no",
                                "--appendfsync",
                                "always",
                                "--protected-mode",
                                "no"};
  if (!o.password.empty()) {
    args.push_back("--requirepass");
    args.push_back(o.password);
  }
  return args;
}

}  // namespace

core::Result<std::unique_ptr<RedisServer>> RedisServer::Start(RedisServerOptions options) {
  const bool pick_port = options.port == 0;
  std::unique_ptr<RedisServer> server(new RedisServer(std::move(options)));
  Status last;
  // A picked port can be taken by someone else before redis binds it: try a few.
  for (int attempt = 0; attempt < (pick_port ? 3 : 1); ++attempt) {
    if (pick_port) server->options_.port = FreePort();
    if (server->options_.port == 0) return core::Internal("RedisServer: no free port");
    last = server->Spawn();
    if (last.ok()) last = server->WaitReady();
    if (last.ok()) return server;
    (void)server->Kill();
  }
  return last;
}

RedisServer::~RedisServer() { (void)Kill(); }

core::RedisEndpoint RedisServer::endpoint() const {
  core::RedisEndpoint ep;
  ep.host = "127.0.0.1";
  ep.port = options_.port;
  ep.password = options_.password;
  return ep;
}

std::string RedisServer::url() const {
  const std::string auth = options_.password.empty() ? "" : ":" + options_.password + "@";
  return "redis://" + auth + "127.0.0.1:" + std::to_string(options_.port) + "/0";
}

Status RedisServer::Spawn() {
  const auto args = ServerArgs(options_, dir_.path().string());
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return core::Internal(std::string("RedisServer: fork: ") + strerror(errno));
  if (pid == 0) {
    // Only async-signal-safe calls here: the test process may have threads.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    execvp("redis-server", argv.data());
    _exit(127);
  }
  pid_ = pid;
  return Status::Ok();
}

bool RedisServer::Pinged() const {
  timeval tv{0, 200000};  // 200 ms per probe
  redisContext* c = redisConnectWithTimeout("127.0.0.1", options_.port, tv);
  if (c == nullptr) return false;
  bool ok = c->err == 0 && redisSetTimeout(c, tv) == REDIS_OK;
  if (ok && !options_.password.empty()) {
    auto* r = static_cast<redisReply*>(redisCommand(c, "AUTH %s", options_.password.c_str()));
    ok = r != nullptr && r->type == REDIS_REPLY_STATUS;
    if (r != nullptr) freeReplyObject(r);
  }
  if (ok) {
    auto* r = static_cast<redisReply*>(redisCommand(c, "PING"));
    ok = r != nullptr && r->type == REDIS_REPLY_STATUS && std::strcmp(r->str, "PONG") == 0;
    if (r != nullptr) freeReplyObject(r);
  }
  redisFree(c);
  return ok;
}

Status RedisServer::WaitReady() {
  const auto deadline = Clock::now() + options_.ready_timeout;
  while (Clock::now() < deadline) {
    int wstatus = 0;
    if (waitpid(pid_, &wstatus, WNOHANG) == pid_) {
      pid_ = -1;
      return core::Unavailable("redis-server on port " + std::to_string(options_.port) +
                               " exited early (status " + std::to_string(wstatus) +
                               "): " + LogTail());
    }
    if (Pinged()) return Status::Ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return core::TimeoutError("redis-server on port " + std::to_string(options_.port) +
                            " did not answer PING within " +
                            std::to_string(options_.ready_timeout.count()) + " ms: " + LogTail());
}

Status RedisServer::Reap(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return Status::Ok();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return core::TimeoutError("redis-server pid " + std::to_string(pid_) + " did not exit");
}

Status RedisServer::Stop() {
  if (pid_ <= 0) return Status::Ok();
  kill(pid_, SIGTERM);
  if (Reap(std::chrono::milliseconds(5000)).ok()) return Status::Ok();
  return Kill();
}

Status RedisServer::Kill() {
  if (pid_ <= 0) return Status::Ok();
  kill(pid_, SIGKILL);
  return Reap(std::chrono::milliseconds(5000));  // SIGKILL cannot be ignored
}

Status RedisServer::Restart() {
  CCLTUNE_RETURN_IF_ERROR(Stop());
  CCLTUNE_RETURN_IF_ERROR(Spawn());
  return WaitReady();
}

std::string RedisServer::LogTail() const {
  std::ifstream in(dir_.path() / "redis.log");
  std::deque<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
    if (lines.size() > 5) lines.pop_front();
  }
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : " | ") + l;
  return out.empty() ? "(no log)" : out;
}

}  // namespace ccltune::testing

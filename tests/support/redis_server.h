// RedisServer: a real `redis-server` for tests, on a free 127.0.0.1 port, in its own temp
// dir, without persistence unless asked. Start() returns once PING answers (deadline), the
// destructor kills it. Stop()/Kill()/Restart() keep the port, for reconnect tests.
// The child gets PR_SET_PDEATHSIG, so a crashed test does not leave servers behind.
// PR_SET_PDEATHSIG follows the *thread* that forked: call Start()/Restart() from a thread
// that outlives the server (the test's main thread), or the server dies with that thread.
// Not thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>

#include "core/base/status.h"
#include "core/redis/redis_client.h"
#include "tests/support/temp_dir.h"

namespace ccltune::testing {

struct RedisServerOptions {
  std::string password;  // requirepass when non-empty
  bool persist = false;  // appendonly (fsync always): data survives Stop()/Restart()
  int port = 0;          // 0 = pick a free port
  std::chrono::milliseconds ready_timeout{5000};
};

class RedisServer {
 public:
  static core::Result<std::unique_ptr<RedisServer>> Start(RedisServerOptions options = {});
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  int port() const { return options_.port; }
  bool running() const { return pid_ > 0; }
  // Endpoint (with the password) and URL for the product code under test.
  core::RedisEndpoint endpoint() const;
  std::string url() const;  // redis://[:password@]127.0.0.1:port/0
  const std::filesystem::path& dir() const { return dir_.path(); }

  core::Status Stop();          // SIGTERM, then SIGKILL after 5 s; waits for the exit
  core::Status Kill();          // SIGKILL: a crash
  core::Status Restart();       // Stop() if running, then start again on the same port
  std::string LogTail() const;  // last lines of the server log, for failure messages

 private:
  explicit RedisServer(RedisServerOptions options) : options_(std::move(options)) {}
  core::Status Spawn();
  core::Status WaitReady();
  bool Pinged() const;
  core::Status Reap(std::chrono::milliseconds timeout);

  RedisServerOptions options_;
  TempDir dir_{"ccltune-redis"};
  pid_t pid_ = -1;
};

}  // namespace ccltune::testing

// The private redis-server of `ccltune tune` (docs/design.md §9): loopback only, on a free port,
// data under ~/.cache/ccltune/redis (append-only file) so results persist between runs.
// One server per data directory, ever: the server itself holds the directory's lock, so a
// launcher killed with -9 leaves no second server beside the first (docs/design.md §9).
// Stopped on destruction; ends with its launcher (parent-death signal) otherwise.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/redis/redis_client.h"
#include "worker/launcher/child_process.h"

namespace ccltune::worker {

// How long Start waits for a data directory whose server is still running (one whose
// launcher was just killed is shutting down) before refusing with who holds it.
inline constexpr double kLockWaitSeconds = 10;

class LocalRedis {
 public:
  // Blocks until the server answers PING (deadline 10 s) or fails with a clear message.
  static core::Result<std::unique_ptr<LocalRedis>> Start(const std::string& data_dir);
  ~LocalRedis();
  LocalRedis(const LocalRedis&) = delete;
  LocalRedis& operator=(const LocalRedis&) = delete;

  const core::RedisEndpoint& endpoint() const { return endpoint_; }

 private:
  LocalRedis(ChildProcess process, core::RedisEndpoint endpoint, int lock_fd);
  ChildProcess process_;
  core::RedisEndpoint endpoint_;
  int lock_fd_;
};

// $CCLTUNE_CACHE_DIR, else $XDG_CACHE_HOME/ccltune, else ~/.cache/ccltune.
std::string DefaultCacheDir();
// The endpoint of a `--redis URL` flag (or CCLTUNE_REDIS_URL): the URL, with the password
// from env CCLTUNE_REDIS_PASSWORD (a Kubernetes Secret) taking precedence over the URL's.
// Errors name the flag.
core::Result<core::RedisEndpoint> RedisFlagEndpoint(const std::string& url);
// A TCP port on 127.0.0.1 that was free a moment ago.
core::Result<int> PickFreePort();

}  // namespace ccltune::worker

// Where `ccltune export` and `ccltune report` read winners from: the Redis of --redis
// (CCLTUNE_REDIS_URL), or the private one `ccltune tune` keeps under the cache dir; and
// which fingerprint they mean (exactly one: a file is for one cluster shape).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/redis/redis_client.h"
#include "core/results/result_store.h"
#include "worker/launcher/local_redis.h"

namespace ccltune::worker::exporting {

// Owns the private server (when used), the client and the store over it.
class CacheSource {
 public:
  // `redis_url` empty = the private Redis under `cache_dir` (DefaultCacheDir() if empty).
  // Blocks until connected (the client's connect timeout) or the server started (10 s).
  static core::Result<std::unique_ptr<CacheSource>> Open(const std::string& redis_url,
                                                         const std::string& cache_dir);
  core::ResultStore& store() { return *store_; }
  // Where the records are, for messages: "the cache at redis://HOST:PORT/DB" (never the
  // password), or "the private cache in DIR" (`ccltune tune`'s own Redis).
  const std::string& where() const { return where_; }

 private:
  CacheSource() = default;
  std::string where_;
  std::unique_ptr<LocalRedis> local_;
  std::unique_ptr<core::RedisClient> client_;
  std::unique_ptr<core::ResultStore> store_;
};

// `wanted` when given (NotFound when the cache does not know it, naming `where` and what it
// holds); else the only fingerprint in the cache. Several → InvalidArgument listing them;
// none → NotFound naming `where` (CacheSource::where()).
core::Result<std::string> PickFingerprint(core::ResultStore& store, const std::string& wanted,
                                          const std::string& where);
// The same rule over any list of fingerprints; `where` names their source in messages
// ("the cache", a file's path).
core::Result<std::string> PickFingerprintAmong(const std::vector<std::string>& all,
                                               const std::string& wanted, const std::string& where);

}  // namespace ccltune::worker::exporting

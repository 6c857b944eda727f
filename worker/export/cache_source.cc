// CacheSource and fingerprint choice (cache_source.h).
#include "worker/export/cache_source.h"

#include <algorithm>

namespace ccltune::worker::exporting {

core::Result<std::unique_ptr<CacheSource>> CacheSource::Open(const std::string& redis_url,
                                                             const std::string& cache_dir) {
  std::unique_ptr<CacheSource> src(new CacheSource());
  core::RedisEndpoint ep;
  if (!redis_url.empty()) {
    CCLTUNE_ASSIGN_OR_RETURN(ep, RedisFlagEndpoint(redis_url));
  } else {
    CCLTUNE_ASSIGN_OR_RETURN(src->local_,
                             LocalRedis::Start(cache_dir.empty() ? DefaultCacheDir() : cache_dir));
    ep = src->local_->endpoint();
  }
  CCLTUNE_ASSIGN_OR_RETURN(src->client_, core::RedisClient::Connect(ep));
  src->store_ = std::make_unique<core::ResultStore>(*src->client_);
  return src;
}

core::Result<std::string> PickFingerprintAmong(const std::vector<std::string>& all,
                                               const std::string& wanted,
                                               const std::string& where) {
  if (!wanted.empty()) {
    if (std::find(all.begin(), all.end(), wanted) != all.end()) return wanted;
    return core::NotFound("--fingerprint " + wanted + " is not in " + where +
                          (all.empty() ? " (" + where + " is empty)" : ""));
  }
  if (all.empty()) return core::NotFound(where + " holds no results");
  if (all.size() > 1) {
    std::string list;
    for (const auto& fp : all) list += (list.empty() ? "" : ", ") + fp;
    return core::InvalidArgument(where + " holds " + std::to_string(all.size()) +
                                 " fingerprints; choose one with --fingerprint: " + list);
  }
  return all.front();
}

core::Result<std::string> PickFingerprint(core::ResultStore& store, const std::string& wanted) {
  CCLTUNE_ASSIGN_OR_RETURN(auto all, store.Fingerprints());
  if (all.empty() && wanted.empty())
    return core::NotFound("the cache holds no results (run `ccltune tune` first)");
  return PickFingerprintAmong(all, wanted, "the cache");
}

}  // namespace ccltune::worker::exporting

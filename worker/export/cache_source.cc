// CacheSource and fingerprint choice (cache_source.h).
#include "worker/export/cache_source.h"

#include <algorithm>

#include "worker/launcher/redis_login.h"

namespace ccltune::worker::exporting {

core::Result<std::unique_ptr<CacheSource>> CacheSource::Open(const std::string& redis_url,
                                                             const std::string& cache_dir) {
  std::unique_ptr<CacheSource> src(new CacheSource());
  core::RedisEndpoint ep;
  if (!redis_url.empty()) {
    CCLTUNE_ASSIGN_OR_RETURN(ep, RedisFlagEndpoint(redis_url));
    src->where_ = "the cache at " + ep.ToString();
  } else {
    const std::string dir = cache_dir.empty() ? DefaultCacheDir() : cache_dir;
    CCLTUNE_ASSIGN_OR_RETURN(src->local_, LocalRedis::Start(dir));
    ep = src->local_->endpoint();
    src->where_ = "the private cache in " + dir;  // its port is new each time: no use to name
  }
  CCLTUNE_ASSIGN_OR_RETURN(src->client_, ConnectCache(ep));
  src->store_ = std::make_unique<core::ResultStore>(*src->client_);
  return src;
}

namespace {

// "aaaa000000000001, bbbb000000000002": at most a screenful, then how many more.
std::string FingerprintList(const std::vector<std::string>& all) {
  constexpr std::size_t kShown = 8;
  std::string list;
  for (std::size_t i = 0; i < all.size() && i < kShown; ++i)
    list += (list.empty() ? "" : ", ") + all[i];
  if (all.size() > kShown) list += " and " + std::to_string(all.size() - kShown) + " more";
  return list;
}

// `where` holds these fingerprints and not `wanted`.
core::Status NotIn(const std::vector<std::string>& all, const std::string& wanted,
                   const std::string& where) {
  return core::NotFound(
      "--fingerprint " + wanted + " is not in " + where +
      (all.empty() ? " (it holds no results)" : " (it holds " + FingerprintList(all) + ")"));
}

}  // namespace

core::Result<std::string> PickFingerprintAmong(const std::vector<std::string>& all,
                                               const std::string& wanted,
                                               const std::string& where) {
  if (!wanted.empty()) {
    if (std::find(all.begin(), all.end(), wanted) != all.end()) return wanted;
    return NotIn(all, wanted, where);
  }
  if (all.empty()) return core::NotFound(where + " holds no results");
  if (all.size() > 1) {
    return core::InvalidArgument(
        where + " holds " + std::to_string(all.size()) +
        " fingerprints; choose one with --fingerprint: " + FingerprintList(all));
  }
  return all.front();
}

core::Result<std::string> PickFingerprint(core::ResultStore& store, const std::string& wanted,
                                          const std::string& where) {
  CCLTUNE_ASSIGN_OR_RETURN(auto all, store.Fingerprints());
  if (all.empty() && wanted.empty())
    return core::NotFound(where + " holds no results (run `ccltune tune` first)");
  // Several: the choice is the user's, wherever the cache is.
  return PickFingerprintAmong(all, wanted, wanted.empty() ? "the cache" : where);
}

}  // namespace ccltune::worker::exporting

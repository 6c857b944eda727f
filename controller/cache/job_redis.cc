#include "controller/cache/job_redis.h"

#include "controller/cache/redis_connect.h"
#include "core/redis/job_keys.h"
#include "core/redis/redis_client.h"

namespace ccltune::controller {
core::Result<nlohmann::json> JobRedis::ReadSummary(const std::string& url,
                                                   const std::string& password,
                                                   const std::string& job_id, int attempt) {
  CCLTUNE_ASSIGN_OR_RETURN(auto redis, ThreadRedis(url, password));
  core::JobKeys keys(job_id, attempt);
  CCLTUNE_ASSIGN_OR_RETURN(core::RedisValue v, redis->Command({"GET", keys.Summary()}));
  if (v.is_nil()) return core::NotFound("no summary at " + keys.Summary());
  auto j = nlohmann::json::parse(v.str, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return core::DataLoss("summary at " + keys.Summary() + " is not a JSON object");
  }
  return j;
}

core::Result<AttemptProgress> JobRedis::Progress(const std::string& url,
                                                 const std::string& password,
                                                 const std::string& job_id, int attempt) {
  CCLTUNE_ASSIGN_OR_RETURN(auto redis, ThreadRedis(url, password));
  core::JobKeys keys(job_id, attempt);
  AttemptProgress p;
  CCLTUNE_ASSIGN_OR_RETURN(core::RedisValue joined, redis->Command({"SCARD", keys.Joined()}));
  CCLTUNE_ASSIGN_OR_RETURN(core::RedisValue presync, redis->Command({"HLEN", keys.PreSync()}));
  p.joined = joined.integer;
  p.presync = presync.integer;
  return p;
}

core::Result<long long> JobRedis::DeleteJobKeys(const std::string& url, const std::string& password,
                                                const std::string& job_id) {
  CCLTUNE_ASSIGN_OR_RETURN(auto redis, ThreadRedis(url, password));
  // First the job's cancel mark (outside the job's pattern: it expires on its own): a rank
  // still running while its pods are collected must find it and publish nothing.
  const std::string cancelled = core::JobKeys(job_id, 0).Cancelled();
  CCLTUNE_RETURN_IF_ERROR(
      redis->Command({"SET", cancelled, "the resource was deleted", "EX", "3600"}).status());
  std::string cursor = "0";
  long long deleted = 0;
  // SCAN, not KEYS: KEYS blocks a shared Redis for the whole keyspace.
  do {
    CCLTUNE_ASSIGN_OR_RETURN(core::RedisValue page,
                             redis->Command({"SCAN", cursor, "MATCH",
                                             core::JobKeys::JobPattern(job_id), "COUNT", "500"}));
    if (page.elements.size() != 2) return core::Internal("SCAN: unexpected reply");
    cursor = page.elements[0].str;
    std::vector<std::string> del{"DEL"};
    for (const auto& k : page.elements[1].elements) del.push_back(k.str);
    if (del.size() > 1) {
      CCLTUNE_ASSIGN_OR_RETURN(core::RedisValue n, redis->Command(del));
      deleted += n.integer;
    }
  } while (cursor != "0");
  return deleted;
}

}  // namespace ccltune::controller

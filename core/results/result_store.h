// The shared results cache in Redis (docs/design.md §4). Keys:
//   ccltune:v1:fp:{fp}                                   readable fingerprint JSON
//   ccltune:v1:result:{fp}:{op}:{dtype}:{redop}:{bytes}  ResultRecord JSON
//   ccltune:v1:index:{fp}:{op}:{dtype}:{redop}           sorted set of bytes
// A problem with an epilogue appends ":epilogue={kind},hidden={H}" to both, so plain
// lookups never land on fused records (docs/design.md §8), and its "{kind},hidden={H}" joins
//   ccltune:v1:epilogues:{fp}                            set of epilogues tuned
// so that a reader (the runtime) finds those index keys without scanning the cache.
//   ccltune:v1:fingerprints                              set of known fingerprints
// Publish is one MULTI/EXEC: all records of a job become visible together or not at all.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/redis/redis_client.h"
#include "core/results/result.h"

namespace ccltune::core {

// The set of every fingerprint with results.
inline constexpr char kFingerprintSet[] = "ccltune:v1:fingerprints";
std::string ResultKey(const std::string& fp, const std::string& problem_key);
std::string IndexKey(const std::string& fp, Op op, Dtype dtype, RedOp redop,
                     const Epilogue& epilogue = {});
std::string FingerprintKey(const std::string& fp);
std::string EpiloguesKey(const std::string& fp);

class ResultStore {
 public:
  explicit ResultStore(RedisClient& redis) : redis_(redis) {}

  // Idempotent: publishing the same records again leaves the same state. With `guards`,
  // nothing is published (Aborted, naming the key) if one of those keys exists, checked
  // atomically with the publish: a cancelled job publishes nothing (docs/design.md §4).
  Status Publish(const std::string& fp, const std::string& fingerprint_json,
                 const std::vector<ResultRecord>& records,
                 const std::vector<std::string>& guards = {});
  // Nearest tuned bucket to `bytes` in log2 space; NotFound when nothing is tuned.
  Result<ResultRecord> Lookup(const std::string& fp, Op op, Dtype dtype, RedOp redop,
                              std::uint64_t bytes, const Epilogue& epilogue = {});
  // Every record of a fingerprint (all ops/dtypes/sizes), sorted by key.
  Result<std::vector<ResultRecord>> List(const std::string& fp);
  Result<std::vector<std::string>> Fingerprints();
  Result<std::string> FingerprintJson(const std::string& fp);
  // Records of every fingerprint (the controller's ccltune_cache_entries).
  Result<long long> CountRecords();

 private:
  // Every key matching `pattern`, sorted, each once.
  Result<std::vector<std::string>> ScanKeys(const std::string& pattern);
  RedisClient& redis_;
};

// Pure helper for the lookup rule, testable without Redis.
std::uint64_t NearestLog2Bucket(const std::vector<std::uint64_t>& tuned, std::uint64_t bytes);

}  // namespace ccltune::core

// ResultStore: the shared results cache of docs/design.md §4 on top of RedisClient.
#include "core/results/result_store.h"

#include <algorithm>
#include <charconv>
#include <tuple>

namespace ccltune::core {
namespace {

constexpr char kPrefix[] = "ccltune:v1:";

// Fingerprints become parts of keys and SCAN patterns: keep them to [0-9a-z-_].
Status CheckFingerprint(const std::string& fp) {
  const bool ok = !fp.empty() && fp.size() <= 64 && std::all_of(fp.begin(), fp.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' || c == '_';
  });
  if (ok) return Status::Ok();
  return InvalidArgument("fingerprint '" + fp +
                         "' is not allowed (must be 1-64 characters of 0-9, a-z, '-', '_')");
}

Result<std::uint64_t> ParseBytes(const std::string& s, const std::string& key) {
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) {
    return DataLoss("index " + key + " holds '" + s + "', not a byte count");
  }
  return v;
}

Result<ResultRecord> GetRecord(RedisClient& redis, const std::string& key) {
  CCLTUNE_ASSIGN_OR_RETURN(RedisValue v, redis.Command({"GET", key}));
  if (v.is_nil()) return NotFound("no result record at " + key);
  auto rec = ResultFromJsonText(v.str);
  if (!rec.ok()) return DataLoss(key + ": " + rec.status().message());
  return rec;
}

// Ascending unsigned ratio a/b >= 1 of two sizes, compared exactly: log2 distance between
// x and n is log2(max/min), and max1/min1 < max2/min2 ⇔ max1*min2 < max2*min1.
bool Closer(std::uint64_t x, std::uint64_t y, std::uint64_t n) {
  using U = unsigned __int128;
  const U xmax = std::max(x, n), xmin = std::min(x, n);
  const U ymax = std::max(y, n), ymin = std::min(y, n);
  return xmax * ymin < ymax * xmin;
}

// Key order with numeric bytes (1024 before 1048576), so a list reads like a table.
bool RecordLess(const ResultRecord& a, const ResultRecord& b) {
  return std::make_tuple(std::string(OpName(a.op)), std::string(DtypeName(a.dtype)),
                         std::string(RedOpName(a.redop)), a.epilogue.KeyPart(), a.bytes) <
         std::make_tuple(std::string(OpName(b.op)), std::string(DtypeName(b.dtype)),
                         std::string(RedOpName(b.redop)), b.epilogue.KeyPart(), b.bytes);
}

}  // namespace

std::string ResultKey(const std::string& fp, const std::string& problem_key) {
  return std::string(kPrefix) + "result:" + fp + ":" + problem_key;
}

std::string IndexKey(const std::string& fp, Op op, Dtype dtype, RedOp redop,
                     const Epilogue& epilogue) {
  std::string key = std::string(kPrefix) + "index:" + fp + ":" + OpName(op) + ":" +
                    DtypeName(dtype) + ":" + RedOpName(redop);
  if (!epilogue.none()) key += ":" + epilogue.KeyPart();
  return key;
}

std::string FingerprintKey(const std::string& fp) { return std::string(kPrefix) + "fp:" + fp; }

std::string EpiloguesKey(const std::string& fp) { return std::string(kPrefix) + "epilogues:" + fp; }

std::uint64_t NearestLog2Bucket(const std::vector<std::uint64_t>& tuned, std::uint64_t bytes) {
  const std::uint64_t n = std::max<std::uint64_t>(bytes, 1);
  std::uint64_t best = 0;
  for (std::uint64_t t : tuned) {
    if (t == 0) continue;
    // Ties go to the larger bucket: its kernels are sized for at least this much data.
    if (best == 0 || Closer(t, best, n) || (!Closer(best, t, n) && t > best)) best = t;
  }
  return best;
}

Status ResultStore::Publish(const std::string& fp, const std::string& fingerprint_json,
                            const std::vector<ResultRecord>& records,
                            const std::vector<std::string>& guards) {
  CCLTUNE_RETURN_IF_ERROR(CheckFingerprint(fp));
  std::vector<std::vector<std::string>> cmds{{"SET", FingerprintKey(fp), fingerprint_json},
                                             {"SADD", kFingerprintSet, fp}};
  for (const auto& r : records) {
    if (r.fingerprint != fp) {
      return InvalidArgument("publish: record " + r.Key() + " has fingerprint '" + r.fingerprint +
                             "', not " + fp);
    }
    const std::string bytes = std::to_string(r.bytes);
    cmds.push_back({"SET", ResultKey(fp, r.Key()), ToJson(r).dump()});
    // Member = score = bytes: re-adding the same member is a no-op, so a retry is idempotent.
    cmds.push_back({"ZADD", IndexKey(fp, r.op, r.dtype, r.redop, r.epilogue), bytes, bytes});
    if (!r.epilogue.none()) cmds.push_back({"SADD", EpiloguesKey(fp), r.epilogue.Label()});
  }
  auto r = redis_.TransactionUnless(guards, cmds);
  if (!r.ok()) return r.status().WithContext("publish " + fp);
  return Status::Ok();
}

Result<ResultRecord> ResultStore::Lookup(const std::string& fp, Op op, Dtype dtype, RedOp redop,
                                         std::uint64_t bytes, const Epilogue& epilogue) {
  CCLTUNE_RETURN_IF_ERROR(CheckFingerprint(fp));
  const std::string index = IndexKey(fp, op, dtype, redop, epilogue);
  CCLTUNE_ASSIGN_OR_RETURN(RedisValue v, redis_.Command({"ZRANGE", index, "0", "-1"}));
  std::vector<std::uint64_t> tuned;
  for (const auto& e : v.elements) {
    CCLTUNE_ASSIGN_OR_RETURN(std::uint64_t b, ParseBytes(e.str, index));
    tuned.push_back(b);
  }
  if (tuned.empty()) return NotFound("nothing tuned at " + index);
  const std::string key = ProblemKey(op, dtype, redop, NearestLog2Bucket(tuned, bytes), epilogue);
  auto rec = GetRecord(redis_, ResultKey(fp, key));
  if (!rec.ok() && rec.status().code() == StatusCode::kNotFound) {
    return DataLoss(index + " lists a size whose record " + ResultKey(fp, key) + " is missing");
  }
  return rec;
}

// SCAN, not KEYS: the cache is shared and KEYS blocks the server on big databases.
Result<std::vector<std::string>> ResultStore::ScanKeys(const std::string& pattern) {
  std::vector<std::string> keys;
  std::string cursor = "0";
  do {
    CCLTUNE_ASSIGN_OR_RETURN(RedisValue v,
                             redis_.Command({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"}));
    if (v.elements.size() != 2) return Internal("redis SCAN: unexpected reply shape");
    cursor = v.elements[0].str;
    for (const auto& k : v.elements[1].elements) keys.push_back(k.str);
  } while (cursor != "0");
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());  // SCAN may repeat keys
  return keys;
}

Result<long long> ResultStore::CountRecords() {
  CCLTUNE_ASSIGN_OR_RETURN(auto keys, ScanKeys(ResultKey("*", "*")));
  return static_cast<long long>(keys.size());
}

Result<std::vector<ResultRecord>> ResultStore::List(const std::string& fp) {
  CCLTUNE_RETURN_IF_ERROR(CheckFingerprint(fp));
  CCLTUNE_ASSIGN_OR_RETURN(auto keys, ScanKeys(ResultKey(fp, "*")));
  std::vector<ResultRecord> out;
  for (const auto& key : keys) {
    auto rec = GetRecord(redis_, key);
    if (!rec.ok() && rec.status().code() == StatusCode::kNotFound) continue;  // deleted since
    if (!rec.ok()) return rec.status();
    out.push_back(std::move(rec).value());
  }
  std::sort(out.begin(), out.end(), RecordLess);
  return out;
}

Result<std::vector<std::string>> ResultStore::Fingerprints() {
  CCLTUNE_ASSIGN_OR_RETURN(RedisValue v, redis_.Command({"SMEMBERS", kFingerprintSet}));
  std::vector<std::string> out;
  for (const auto& e : v.elements) out.push_back(e.str);
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::string> ResultStore::FingerprintJson(const std::string& fp) {
  CCLTUNE_RETURN_IF_ERROR(CheckFingerprint(fp));
  CCLTUNE_ASSIGN_OR_RETURN(RedisValue v, redis_.Command({"GET", FingerprintKey(fp)}));
  if (v.is_nil())
    return NotFound("fingerprint " + fp + " is not known (no " + FingerprintKey(fp) + ")");
  return v.str;
}

}  // namespace ccltune::core

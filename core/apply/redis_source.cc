// Deadline-bounded cache reads with raw hiredis (redis_source.h). Not core::RedisClient:
// that one reconnects and retries for seconds, which is right for the worker and wrong
// inside an application's communicator init.
#include "core/apply/redis_source.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <cstdlib>
#include <memory>
#include <set>
#include <vector>

#include "core/apply/winner_table.h"
#include "core/redis/redis_client.h"
#include "core/results/result_store.h"

namespace ccltune::apply {
namespace {

using Clock = std::chrono::steady_clock;
struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
struct ContextDeleter {
  void operator()(redisContext* c) const { redisFree(c); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;
using Context = std::unique_ptr<redisContext, ContextDeleter>;
using Argv = std::vector<std::string>;

// Time left as a timeval; false when the deadline has passed.
bool TimeLeft(Clock::time_point deadline, timeval& tv) {
  const auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now());
  if (left.count() <= 0) return false;
  tv.tv_sec = static_cast<long>(left.count() / 1000000);
  tv.tv_usec = static_cast<long>(left.count() % 1000000);
  return true;
}

core::Result<Context> Connect(const core::RedisEndpoint& ep, Clock::time_point deadline) {
  timeval tv{};
  if (!TimeLeft(deadline, tv)) return core::TimeoutError("no time left to connect to redis");
  Context c(redisConnectWithTimeout(ep.host.c_str(), ep.port, tv));
  if (c == nullptr) return core::Internal("redis: out of memory");
  if (c->err != 0) return core::Unavailable("redis " + ep.ToString() + ": " + c->errstr);
  return c;
}

// Sends every command, then reads every reply, each read bounded by the time left.
core::Result<std::vector<Reply>> Pipeline(redisContext* c, const std::vector<Argv>& cmds,
                                          Clock::time_point deadline) {
  for (const auto& argv : cmds) {
    std::vector<const char*> ptrs;
    std::vector<size_t> lens;
    for (const auto& a : argv) {
      ptrs.push_back(a.data());
      lens.push_back(a.size());
    }
    if (redisAppendCommandArgv(c, static_cast<int>(argv.size()), ptrs.data(), lens.data()) !=
        REDIS_OK)
      return core::Internal("redis: cannot queue a command");
  }
  std::vector<Reply> out;
  for (std::size_t i = 0; i < cmds.size(); ++i) {
    timeval tv{};
    if (!TimeLeft(deadline, tv) || redisSetTimeout(c, tv) != REDIS_OK)
      return core::TimeoutError("redis: deadline passed while reading replies");
    void* raw = nullptr;
    if (redisGetReply(c, &raw) != REDIS_OK || raw == nullptr)
      return core::Unavailable(std::string("redis: ") + (c->err ? c->errstr : "no reply"));
    Reply r(static_cast<redisReply*>(raw));
    if (r->type == REDIS_REPLY_ERROR)
      return core::Unavailable("redis " + cmds[i][0] + ": " + std::string(r->str, r->len));
    out.push_back(std::move(r));
  }
  return out;
}

core::Status Authenticate(redisContext* c, const core::RedisEndpoint& ep,
                          Clock::time_point deadline) {
  std::vector<Argv> cmds;
  // "user:password" is AUTH's two arguments, never one (an ACL user would be refused).
  if (auto auth = core::AuthArgv(ep); !auth.empty()) cmds.push_back(std::move(auth));
  if (ep.db != 0) cmds.push_back({"SELECT", std::to_string(ep.db)});
  if (cmds.empty()) return core::Status::Ok();
  auto r = Pipeline(c, cmds, deadline);
  return r.ok() ? core::Status::Ok() : r.status();
}

struct IndexedSize {
  SliceKey slice;
  std::uint64_t bytes;
  core::Epilogue epilogue;  // none: a plain slice
};

// Most epilogues of one fingerprint read (each costs a ZRANGE per float dtype).
constexpr std::size_t kMaxEpilogues = 64;

// The tuned sizes in ZRANGE reply `r`, as sizes of `slice` (with `epilogue`).
void AppendSizes(const redisReply* r, const SliceKey& slice, const core::Epilogue& epilogue,
                 std::vector<IndexedSize>& out) {
  if (r->type != REDIS_REPLY_ARRAY) return;
  for (std::size_t e = 0; e < r->elements; ++e) {
    const redisReply* m = r->element[e];
    if (m->type != REDIS_REPLY_STRING) continue;
    char* end = nullptr;
    const std::string s(m->str, m->len);
    const unsigned long long b = std::strtoull(s.c_str(), &end, 10);
    if (!s.empty() && *end == '\0' && b > 0) out.push_back({slice, b, epilogue});
  }
}

// The epilogues the cache lists for `fp` (ccltune:v1:epilogues:{fp}), then one ZRANGE per
// epilogue and float dtype of the sum all-reduce: the runtime dispatches fused ops by them.
core::Status ReadEpilogueIndexes(redisContext* c, const std::string& fp, const redisReply* members,
                                 Clock::time_point deadline, std::vector<IndexedSize>& out) {
  if (members->type != REDIS_REPLY_ARRAY) return core::Status::Ok();
  std::vector<Argv> cmds;
  std::vector<std::pair<SliceKey, core::Epilogue>> slices;
  for (std::size_t i = 0; i < members->elements && i < kMaxEpilogues; ++i) {
    const redisReply* m = members->element[i];
    if (m->type != REDIS_REPLY_STRING) continue;
    auto e = core::ParseEpilogueKeyPart(std::string_view(m->str, m->len));
    if (!e.ok() || e->none()) continue;  // a member this build cannot read: not ours to use
    for (core::Dtype d : {core::Dtype::kBf16, core::Dtype::kFp16, core::Dtype::kFp32}) {
      const SliceKey slice{core::Op::kAllReduce, d, core::RedOp::kSum};
      slices.push_back({slice, *e});
      cmds.push_back({"ZRANGE", core::IndexKey(fp, core::Op::kAllReduce, d, core::RedOp::kSum, *e),
                      "0", "255"});
    }
  }
  if (cmds.empty()) return core::Status::Ok();
  CCLTUNE_ASSIGN_OR_RETURN(auto replies, Pipeline(c, cmds, deadline));
  for (std::size_t i = 0; i < replies.size(); ++i) {
    AppendSizes(replies[i].get(), slices[i].first, slices[i].second, out);
  }
  return core::Status::Ok();
}

// One ZRANGE per (op, dtype, redop) the tuner can use; returns the tuned sizes found.
core::Result<std::vector<IndexedSize>> ReadIndexes(redisContext* c, const std::string& fp,
                                                   Clock::time_point deadline) {
  std::vector<Argv> cmds;
  std::vector<SliceKey> slices;
  for (core::Op op : core::AllOps()) {
    if (NcclFuncOf(op) < 0) continue;
    std::vector<core::RedOp> redops{core::RedOp::kNone};
    if (core::IsReducing(op)) redops = core::AllRedOps();
    for (core::Dtype d : core::AllDtypes()) {
      for (core::RedOp r : redops) {
        slices.push_back({op, d, r});
        cmds.push_back({"ZRANGE", core::IndexKey(fp, op, d, r), "0", "255"});
      }
    }
  }
  cmds.push_back({"SMEMBERS", core::EpiloguesKey(fp)});
  CCLTUNE_ASSIGN_OR_RETURN(auto replies, Pipeline(c, cmds, deadline));
  std::vector<IndexedSize> out;
  for (std::size_t i = 0; i < slices.size(); ++i) AppendSizes(replies[i].get(), slices[i], {}, out);
  CCLTUNE_RETURN_IF_ERROR(ReadEpilogueIndexes(c, fp, replies.back().get(), deadline, out));
  return out;
}

std::string KeyOf(const std::string& fp, const IndexedSize& s) {
  const auto& [op, dtype, redop] = s.slice;
  return core::ResultKey(fp, core::ProblemKey(op, dtype, redop, s.bytes, s.epilogue));
}

void Reject(ParsedFile& out, const std::string& why) {
  if (out.rejected++ == 0) out.first_error = why;
}

// A record must describe the problem its key names; anything else is a corrupt cache.
void Accept(ParsedFile& out, const std::string& fp, const IndexedSize& s, const std::string& key,
            const redisReply* r) {
  if (r->type != REDIS_REPLY_STRING || r->len == 0)
    return Reject(out, key + ": listed in the index but has no record");
  auto rec = ParseWinnerRecord(std::string_view(r->str, r->len));
  if (!rec.ok()) return Reject(out, key + ": " + rec.status().message());
  const auto& [op, dtype, redop] = s.slice;
  if (rec->fingerprint != fp || rec->op != op || rec->dtype != dtype || rec->redop != redop ||
      rec->bytes != s.bytes || rec->epilogue.KeyPart() != s.epilogue.KeyPart())
    return Reject(out, key + ": the record describes another problem");
  out.records.push_back(std::move(rec).value());
}

// The other fingerprints the cache holds and their inputs (ccltune:v1:fp:{fp}), at most
// kMaxOtherFingerprints: what a communicator that found nothing is told it differs from.
constexpr std::size_t kMaxOtherFingerprints = 32;
core::Status ReadOtherFingerprints(redisContext* c, Clock::time_point deadline, ParsedFile& out) {
  CCLTUNE_ASSIGN_OR_RETURN(auto members,
                           Pipeline(c, {{"SMEMBERS", core::kFingerprintSet}}, deadline));
  const redisReply* set = members.front().get();
  if (set->type != REDIS_REPLY_ARRAY) return core::Status::Ok();
  std::vector<std::string> fps;
  std::vector<Argv> gets;
  for (std::size_t i = 0; i < set->elements && fps.size() < kMaxOtherFingerprints; ++i) {
    if (set->element[i]->type != REDIS_REPLY_STRING) continue;
    fps.emplace_back(set->element[i]->str, set->element[i]->len);
    gets.push_back({"GETRANGE", core::FingerprintKey(fps.back()), "0", "4095"});
  }
  if (gets.empty()) return core::Status::Ok();
  CCLTUNE_ASSIGN_OR_RETURN(auto inputs, Pipeline(c, gets, deadline));
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i]->type == REDIS_REPLY_STRING)
      out.other_fingerprints.emplace_back(fps[i], std::string(inputs[i]->str, inputs[i]->len));
  }
  return core::Status::Ok();
}

}  // namespace

core::Result<ParsedFile> LoadFromRedis(const std::string& url, const std::string& fingerprint,
                                       std::optional<core::Dtype> pinned,
                                       Clock::time_point deadline) {
  CCLTUNE_ASSIGN_OR_RETURN(core::RedisEndpoint ep, core::ParseRedisUrl(url));
  // An injected pod's ACL user (docs/inject.md).
  core::ApplyRedisCredentials(std::getenv("CCLTUNE_REDIS_USERNAME"),
                              std::getenv("CCLTUNE_REDIS_PASSWORD"), &ep);
  CCLTUNE_ASSIGN_OR_RETURN(Context c, Connect(ep, deadline));
  CCLTUNE_RETURN_IF_ERROR(Authenticate(c.get(), ep, deadline));
  CCLTUNE_ASSIGN_OR_RETURN(auto sizes, ReadIndexes(c.get(), fingerprint, deadline));
  if (sizes.empty()) {
    ParsedFile none;  // nothing tuned under this fingerprint: say what the cache has instead
    CCLTUNE_RETURN_IF_ERROR(ReadOtherFingerprints(c.get(), deadline, none));
    return none;
  }
  std::set<SliceKey> available;
  for (const auto& s : sizes) {
    if (s.epilogue.none()) available.insert(s.slice);
  }
  const auto selected = SelectSlices(available, pinned);
  std::vector<IndexedSize> wanted;
  std::vector<Argv> cmds;
  for (const auto& s : sizes) {
    // Epilogue slices are kept whole (the runtime keys them by dtype, kind and hidden);
    // plain ones by the tuner's slice policy.
    auto it = selected.find(std::get<0>(s.slice));
    const bool plain_selected = it != selected.end() && it->second.dtype == std::get<1>(s.slice) &&
                                it->second.redop == std::get<2>(s.slice);
    if ((s.epilogue.none() && !plain_selected) || wanted.size() >= kMaxRecords) continue;
    wanted.push_back(s);
    cmds.push_back({"GETRANGE", KeyOf(fingerprint, s), "0", std::to_string(kMaxRecordBytes)});
  }
  CCLTUNE_ASSIGN_OR_RETURN(auto replies, Pipeline(c.get(), cmds, deadline));
  ParsedFile out;
  for (std::size_t i = 0; i < replies.size(); ++i)
    Accept(out, fingerprint, wanted[i], KeyOf(fingerprint, wanted[i]), replies[i].get());
  return out;
}

}  // namespace ccltune::apply

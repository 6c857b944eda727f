#include "worker/rendezvous/rendezvous.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "core/base/counted.h"
#include "worker/rendezvous/poll.h"

namespace ccltune::worker {
namespace {

using core::RedisValue;
using core::Result;
using core::Status;

// HGETALL reply → field → value.
std::map<std::string, std::string> HashOf(const RedisValue& v) {
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i + 1 < v.elements.size(); i += 2)
    out[v.elements[i].str] = v.elements[i + 1].str;
  return out;
}

}  // namespace

std::string JoinRanks(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

Rendezvous::Rendezvous(core::RedisClient& redis, core::JobKeys keys, int rank, int world_size,
                       const CancelToken& cancel, int key_ttl_seconds)
    : redis_(redis),
      keys_(std::move(keys)),
      rank_(rank),
      world_(world_size),
      cancel_(cancel),
      ttl_(key_ttl_seconds) {}

Status Rendezvous::Expire(const std::string& key) {
  auto r = redis_.Command({"EXPIRE", key, std::to_string(ttl_)});
  return r.ok() ? Status::Ok() : r.status();
}

// `list_command` lists the ranks present: HKEYS of an exchange hash, SMEMBERS of the set.
Result<std::vector<int>> Rendezvous::MissingRanks(const std::vector<std::string>& list_command) {
  auto all = redis_.Command(list_command);
  if (!all.ok()) return all.status();
  std::vector<bool> seen(world_, false);
  for (const auto& e : all->elements) {
    const int r = std::atoi(e.str.c_str());
    if (r >= 0 && r < world_) seen[r] = true;
  }
  std::vector<int> missing;
  for (int r = 0; r < world_; ++r)
    if (!seen[r]) missing.push_back(r);
  return missing;
}

Result<std::vector<RankRecord>> Rendezvous::Join(const RankRecord& self, Deadline deadline) {
  // The record first, then the set membership (what the controller counts): a rank that is
  // in the set always has its record.
  const std::string joined = keys_.Joined();
  auto rec =
      redis_.Command({"SET", keys_.Rank(rank_), self.ToJson().dump(), "EX", std::to_string(ttl_)});
  if (!rec.ok()) return rec.status().WithContext("rendezvous join");
  auto w = redis_.Command({"SADD", joined, std::to_string(rank_)});
  if (!w.ok()) return w.status().WithContext("rendezvous join");
  CCLTUNE_RETURN_IF_ERROR(Expire(joined));
  std::vector<int> missing;
  auto st = PollUntil(
      deadline, cancel_,
      [&]() -> Result<bool> {
        auto m = MissingRanks({"SMEMBERS", joined});
        if (!m.ok()) return m.status();
        missing = *m;
        return missing.empty();
      },
      [&] {
        return "rendezvous: " + std::to_string(world_ - static_cast<int>(missing.size())) + " of " +
               core::Counted(world_, "rank") + " joined before the deadline; missing " +
               "ranks: " + JoinRanks(missing);
      },
      {0.001, 0.1});
  CCLTUNE_RETURN_IF_ERROR(st);
  std::vector<std::string> mget{"MGET"};
  for (int r = 0; r < world_; ++r) mget.push_back(keys_.Rank(r));
  auto all = redis_.Command(mget);
  if (!all.ok()) return all.status().WithContext("rendezvous join");
  std::vector<RankRecord> records(world_);
  for (int r = 0; r < world_ && r < static_cast<int>(all->elements.size()); ++r) {
    if (all->elements[r].is_nil())
      return core::DataLoss("rank " + std::to_string(r) + ": no join record");
    auto parsed = RankRecord::FromJson(all->elements[r].str);
    if (!parsed.ok()) return parsed.status().WithContext("rank " + std::to_string(r));
    records[r] = *parsed;
  }
  return records;
}

Result<PreSyncReport> Rendezvous::PreSync(double window_seconds, Deadline deadline) {
  const std::string key = keys_.PreSync();
  auto now = redis_.ServerTime();
  if (!now.ok()) return now.status().WithContext("pre-sync");
  const auto local_start = Clock::now();
  auto w = redis_.Command({"HSET", key, std::to_string(rank_), std::to_string(*now)});
  if (!w.ok()) return w.status().WithContext("pre-sync");
  CCLTUNE_RETURN_IF_ERROR(Expire(key));
  std::map<std::string, std::string> arrivals;
  std::vector<int> late;
  bool window_over = false;
  auto step = [&]() -> Result<bool> {
    auto all = redis_.Command({"HGETALL", key});
    if (!all.ok()) return all.status();
    arrivals = HashOf(*all);
    if (static_cast<int>(arrivals.size()) >= world_) return true;
    double first = 1e300;
    for (const auto& [r, t] : arrivals) first = std::min(first, std::atof(t.c_str()));
    auto t = redis_.ServerTime();
    if (!t.ok()) return t.status();
    late.clear();
    for (int r = 0; r < world_; ++r)
      if (!arrivals.count(std::to_string(r))) late.push_back(r);
    window_over = *t > first + window_seconds;
    return window_over;
  };
  const auto late_msg = [&] {
    return "PreSyncTimeout: ranks " + JoinRanks(late) + " did not arrive within the " +
           std::to_string(window_seconds).substr(0, 5) + " s pre-sync window";
  };
  CCLTUNE_RETURN_IF_ERROR(PollUntil(deadline, cancel_, step, late_msg, {0.0005, 0.002}));
  if (static_cast<int>(arrivals.size()) < world_) return core::TimeoutError(late_msg());
  PreSyncReport report;
  report.wait_seconds = std::chrono::duration<double>(Clock::now() - local_start).count();
  double first = 1e300, last = -1e300;
  for (const auto& [r, t] : arrivals) {
    first = std::min(first, std::atof(t.c_str()));
    last = std::max(last, std::atof(t.c_str()));
  }
  report.skew_seconds = last - first;
  return report;
}

Result<std::vector<std::string>> Rendezvous::AllGather(const std::string& name,
                                                       const std::string& mine, Deadline deadline) {
  std::vector<int> everyone(world_);
  for (int r = 0; r < world_; ++r) everyone[r] = r;
  return AllGatherAmong(name, mine, everyone, deadline);
}

// The ranks' values are fields of one hash: a member waits for the other members' fields only.
Result<std::vector<std::string>> Rendezvous::AllGatherAmong(const std::string& name,
                                                            const std::string& mine,
                                                            const std::vector<int>& members,
                                                            Deadline deadline) {
  // A member outside the job would never arrive: refused before any wait.
  CCLTUNE_RETURN_IF_ERROR(
      core::ValuesOfMembers(std::vector<std::string>(world_), members, name).status());
  const std::string key = keys_.Exchange(name);
  auto w = redis_.Command({"HSET", key, std::to_string(rank_), mine});
  if (!w.ok()) return w.status().WithContext("exchange " + name);
  CCLTUNE_RETURN_IF_ERROR(Expire(key));
  std::vector<int> missing;
  CCLTUNE_RETURN_IF_ERROR(PollUntil(
      deadline, cancel_,
      [&]() -> Result<bool> {
        auto m = MissingRanks({"HKEYS", key});
        if (!m.ok()) return m.status();
        missing.clear();
        for (int r : members) {
          if (std::find(m->begin(), m->end(), r) != m->end()) missing.push_back(r);
        }
        return missing.empty();
      },
      [&] { return "exchange " + name + ": no value from ranks " + JoinRanks(missing); }));
  auto all = redis_.Command({"HGETALL", key});
  if (!all.ok()) return all.status().WithContext("exchange " + name);
  std::vector<std::string> values(world_);
  for (const auto& [field, value] : HashOf(*all)) {
    const int r = std::atoi(field.c_str());
    if (r >= 0 && r < world_) values[r] = value;
  }
  return core::ValuesOfMembers(values, members, name);
}

Result<std::string> Rendezvous::Broadcast(const std::string& name, int root,
                                          const std::optional<std::string>& value,
                                          Deadline deadline) {
  const std::string key = keys_.Exchange(name);
  if (rank_ == root) {
    if (!value) return core::Internal("broadcast " + name + ": root has no value");
    auto w = redis_.Command({"SET", key, *value, "EX", std::to_string(ttl_)});
    if (!w.ok()) return w.status().WithContext("broadcast " + name);
    return *value;
  }
  std::string got;
  CCLTUNE_RETURN_IF_ERROR(PollUntil(
      deadline, cancel_,
      [&]() -> Result<bool> {
        auto r = redis_.Command({"GET", key});
        if (!r.ok()) return r.status();
        if (r->is_nil()) return false;
        got = r->str;
        return true;
      },
      [&] { return "broadcast " + name + ": rank " + std::to_string(root) + " never sent it"; }));
  return got;
}

Status Rendezvous::PutNote(const std::string& name, const std::string& value) {
  const std::string key = keys_.Exchange("note:" + name);
  auto w = redis_.Command({"RPUSH", key, "rank " + std::to_string(rank_) + ": " + value});
  if (!w.ok()) return w.status();
  return Expire(key);
}

Result<std::vector<std::string>> Rendezvous::Notes(const std::string& name) {
  auto r = redis_.Command({"LRANGE", keys_.Exchange("note:" + name), "0", "-1"});
  if (!r.ok()) return r.status();
  std::vector<std::string> out;
  for (const auto& e : r->elements) out.push_back(e.str);
  return out;
}

}  // namespace ccltune::worker

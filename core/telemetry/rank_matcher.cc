#include "core/telemetry/rank_matcher.h"

#include <algorithm>

#include "core/telemetry/program_metrics.h"

namespace ccltune::telemetry {
namespace {

void PutU64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint64_t GetU64(std::string_view in) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  return v;
}

}  // namespace

bool Sampled(std::uint64_t seq) { return seq != UINT64_MAX && seq % kWindowCalls < kSampledCalls; }

std::string WindowKey(std::uint64_t comm_hash, const std::string& op, std::uint64_t window) {
  return "ccltune:v1:telemetry:" + CommLabel(comm_hash) + ":" + op + ":" + std::to_string(window);
}

bool WindowCollector::Add(const CommInfo& comm, CallRecord call, Clock::time_point now) {
  // An untimed record (a count only) has no time to match and says nothing of progress.
  if (call.seq == UINT64_MAX || !HasTimes(call)) return true;
  std::lock_guard<std::mutex> lock(mu_);
  Stream stream{comm.comm_hash, call.op};
  auto highest = highest_seq_.try_emplace(stream, call.seq).first;
  highest->second = std::max(highest->second, call.seq);
  if (!Sampled(call.seq)) return true;
  const auto key = std::make_pair(std::move(stream), call.seq / kWindowCalls);
  auto it = open_.find(key);
  if (it == open_.end()) {
    if (open_.size() >= kMaxOpenWindows) return false;
    it = open_.emplace(key, Window{comm, key.first.second, key.second, {}, now}).first;
  }
  it->second.calls.push_back(std::move(call));
  it->second.last_added = now;
  return true;
}

std::vector<Window> WindowCollector::TakeReady(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Window> ready;
  for (auto it = open_.begin(); it != open_.end();) {
    const Window& w = it->second;
    // An unsampled call after the window: the window's calls are all in (or lost).
    const bool passed =
        highest_seq_[Stream{w.comm.comm_hash, w.op}] >= w.index * kWindowCalls + kSampledCalls;
    if (passed || w.calls.size() >= kSampledCalls || now - w.last_added >= kPostAfterIdle) {
      ready.push_back(std::move(it->second));
      it = open_.erase(it);
    } else {
      ++it;
    }
  }
  return ready;
}

void WindowCollector::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  open_.clear();
}

std::string PackTimes(const std::vector<CallRecord>& calls) {
  std::string out;
  out.reserve(calls.size() * 16);
  for (const CallRecord& c : calls) {
    PutU64(out, c.seq);
    PutU64(out, c.total_ns);
  }
  return out;
}

std::map<std::uint64_t, std::uint64_t> UnpackTimes(std::string_view packed) {
  std::map<std::uint64_t, std::uint64_t> times;
  for (std::size_t at = 0; at + 16 <= packed.size(); at += 16)
    times[GetU64(packed.substr(at, 8))] = GetU64(packed.substr(at + 8, 8));
  return times;
}

std::vector<MatchedCall> MatchCalls(
    const std::vector<CallRecord>& own,
    const std::vector<std::map<std::uint64_t, std::uint64_t>>& ranks) {
  std::vector<MatchedCall> matched;
  for (const CallRecord& call : own) {
    std::uint64_t least = call.total_ns;
    bool everywhere = true;
    for (const auto& times : ranks) {
      auto it = times.find(call.seq);
      everywhere = everywhere && it != times.end();
      if (it != times.end()) least = std::min(least, it->second);
    }
    if (everywhere) matched.push_back({call, call.total_ns - least, least});
  }
  return matched;
}

}  // namespace ccltune::telemetry

// Min-over-ranks matching of NCCL's calls (docs/design.md §13), the part without I/O.
//
// Every rank samples the same calls: those whose sequence number falls in the first
// kSampledCalls of each kWindowCalls (a window). NCCL numbers each collective type of a
// communicator on its own (allGather's 0 beside allReduce's 10), so a call is matched by
// (communicator, op, sequence number) and windows are kept per (communicator, op). WindowCollector
// gathers a rank's sampled calls per (communicator, window) and hands a window over once it is
// complete, a later call of the communicator shows that it is over, or no call came for
// kPostAfterIdle. The Redis side (RedisExchange) posts the window's times under WindowKey(), field
// = the rank, value = PackTimes(), and reads every rank's; MatchCalls then sets each call's wait =
// own time - the minimum over the ranks, transfer = that minimum: the rank that arrived last waited
// for no one, and every other rank's time beyond it was waiting.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/telemetry/call_record.h"

namespace ccltune::telemetry {

using Clock = std::chrono::steady_clock;

// In the C header: the profiler plugin times exactly these calls (its duty cycle).
inline constexpr std::uint64_t kWindowCalls = CCLTUNE_TELEMETRY_MATCH_WINDOW_CALLS;
inline constexpr std::uint64_t kSampledCalls = CCLTUNE_TELEMETRY_MATCH_SAMPLED_CALLS;
inline constexpr std::chrono::milliseconds kPostAfterIdle{1000};
// Bounds the memory one rank keeps for peers that are slow to post (or gone).
inline constexpr std::size_t kMaxOpenWindows = 64;

// Whether every rank samples the call numbered `seq` (UINT64_MAX: unknown, never).
bool Sampled(std::uint64_t seq);
// "ccltune:v1:telemetry:{16 hex}:{op}:{window}".
std::string WindowKey(std::uint64_t comm_hash, const std::string& op, std::uint64_t window);

// One rank's sampled calls of one window of one communicator.
struct Window {
  CommInfo comm;
  std::string op;
  std::uint64_t index = 0;  // seq / kWindowCalls
  std::vector<CallRecord> calls;
  Clock::time_point last_added;
};

// Thread-safe: Add from the library's thread, TakeReady from the Redis thread.
class WindowCollector {
 public:
  // An NCCL call of `comm`: kept when Sampled(), else it only shows how far the
  // communicator got; an untimed record (CCLTUNE_TELEMETRY_CALL_UNTIMED) neither. False when a
  // sampled call cannot be kept (kMaxOpenWindows are open): it is then not matched.
  bool Add(const CommInfo& comm, CallRecord call, Clock::time_point now);
  // The windows ready to post (see the header comment), removed from the collector.
  std::vector<Window> TakeReady(Clock::time_point now);
  // Forgets every open window (Redis is down: nothing could match them).
  void Clear();

 private:
  std::mutex mu_;
  using Stream = std::pair<std::uint64_t, std::string>;      // (comm, op): one numbering
  std::map<std::pair<Stream, std::uint64_t>, Window> open_;  // by (stream, window)
  std::map<Stream, std::uint64_t> highest_seq_;
};

// 16 bytes per call, little-endian: seq, total_ns.
std::string PackTimes(const std::vector<CallRecord>& calls);
// seq -> total_ns; a truncated tail is ignored (a peer's value is not trusted to be whole).
std::map<std::uint64_t, std::uint64_t> UnpackTimes(std::string_view packed);

struct MatchedCall {
  CallRecord call;
  std::uint64_t wait_ns = 0;
  std::uint64_t transfer_ns = 0;
};
// `own` against every rank's times (this rank's included). A call that some rank lacks is
// not matched: the minimum over the others may not be the last arrival.
std::vector<MatchedCall> MatchCalls(
    const std::vector<CallRecord>& own,
    const std::vector<std::map<std::uint64_t, std::uint64_t>>& ranks);

}  // namespace ccltune::telemetry

// ProgramTelemetry: one process's telemetry, wired from its parts (docs/design.md §13).
//
// Threads: the program's threads only copy calls into the CallQueue (RecordCall) or bump a
// counter (Forwarded, Dropped, Tuned). The library's draining thread turns queued calls
// into series, hands NCCL's calls to the WindowCollector, applies the min-over-ranks splits
// the RedisExchange thread found, keeps ccltune_program_sync_wait_ratio, reports the queue's
// drops, and starts the endpoint and the pushes once the local rank is known (from the
// environment, else the first communicator's CUDA device). civetweb's threads serve
// /metrics; the Pusher's thread pushes.
// Thread-safety: every method from any thread; Shutdown once.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/metrics/metrics.h"
#include "core/telemetry/call_queue.h"
#include "core/telemetry/exporter.h"
#include "core/telemetry/program_metrics.h"
#include "core/telemetry/rank_matcher.h"
#include "core/telemetry/redis_exchange.h"
#include "core/telemetry/telemetry_settings.h"
#include "core/telemetry/wait_ratio.h"

namespace ccltune::telemetry {

inline constexpr std::chrono::milliseconds kDrainInterval{20};

class ProgramTelemetry {
 public:
  // Started telemetry, or nullptr when it is off or a setting is bad (each bad value is
  // logged in one line).
  static std::unique_ptr<ProgramTelemetry> Start(const EnvLookup& env);
  ~ProgramTelemetry();
  ProgramTelemetry(const ProgramTelemetry&) = delete;
  ProgramTelemetry& operator=(const ProgramTelemetry&) = delete;

  void CommInit(const CommInfo& comm);
  void RecordCall(CallRecord&& call);  // never blocks
  void Forwarded(const std::string& reason, std::uint64_t n) { metrics_->Forwarded(reason, n); }
  void Dropped(const std::string& what, std::uint64_t n) { metrics_->Dropped(what, n); }
  void Tuned(std::uint64_t comm_hash, const std::string& op, const std::string& dtype,
             std::uint64_t bytes, const std::string& choice, double seconds) {
    metrics_->Tuned(comm_hash, op, dtype, bytes, choice, seconds);
  }
  // Stops the threads (a last drain and a last push first) and the endpoint by `deadline`.
  void Shutdown(Clock::time_point deadline);

 private:
  explicit ProgramTelemetry(TelemetrySettings settings);
  core::Status Init();
  void DrainStep(bool last);
  void StartExport();
  void Observe(const CallRecord& call, const std::map<std::uint64_t, CommInfo>& comms);
  void ApplyMatched();
  void ReportQueueDrops();
  void UpdateRatios();

  const TelemetrySettings settings_;
  core::Registry registry_;
  std::unique_ptr<ProgramMetrics> metrics_;
  CallQueue queue_;
  WindowCollector collector_;

  std::mutex mu_;  // guards comms_, first_comm_, matched_
  std::map<std::uint64_t, CommInfo> comms_;
  std::optional<CommInfo> first_comm_;
  std::vector<std::pair<std::vector<MatchedCall>, int>> matched_;

  // The draining thread's own.
  WaitRatio ratio_;
  std::int64_t ratio_second_ = -1;
  bool said_queue_full_ = false;
  bool export_started_ = false;

  std::unique_ptr<Endpoint> endpoint_;
  std::unique_ptr<Pusher> pusher_;
  std::unique_ptr<RedisExchange> redis_;
  std::unique_ptr<StoppableThread> drain_;
};

}  // namespace ccltune::telemetry

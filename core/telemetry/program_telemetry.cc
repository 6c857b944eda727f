#include "core/telemetry/program_telemetry.h"

#include <unistd.h>

#include "core/base/log.h"

namespace ccltune::telemetry {
namespace {

std::int64_t WholeSeconds(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

// The Pushgateway group's pod: the pod's name, else the host's.
std::string PodOrHost(const std::string& pod) {
  if (!pod.empty()) return pod;
  char host[256] = {};
  return gethostname(host, sizeof host - 1) == 0 ? std::string(host) : std::string("unknown");
}

}  // namespace

std::unique_ptr<ProgramTelemetry> ProgramTelemetry::Start(const EnvLookup& env) {
  std::vector<core::Status> errors;
  TelemetrySettings settings = ReadTelemetrySettings(env, &errors);
  for (const core::Status& e : errors)
    core::LogError("telemetry: " + e.message() + "; telemetry is off, the program runs on");
  if (!settings.enabled) return nullptr;
  std::unique_ptr<ProgramTelemetry> t(new ProgramTelemetry(std::move(settings)));
  if (core::Status s = t->Init(); !s.ok()) {
    core::LogError("telemetry: " + s.ToString() + "; telemetry is off, the program runs on");
    return nullptr;
  }
  return t;
}

ProgramTelemetry::ProgramTelemetry(TelemetrySettings settings)
    : settings_(std::move(settings)), queue_(settings_.queue_calls) {}

ProgramTelemetry::~ProgramTelemetry() { Shutdown(Clock::now()); }

core::Status ProgramTelemetry::Init() {
  CCLTUNE_ASSIGN_OR_RETURN(metrics_, ProgramMetrics::Create(registry_));
  // An empty value omits the label (metrics.h): absent downward-API variables add nothing.
  CCLTUNE_RETURN_IF_ERROR(registry_.SetConstLabel("namespace", settings_.pod_namespace));
  CCLTUNE_RETURN_IF_ERROR(registry_.SetConstLabel("pod", settings_.pod_name));
  CCLTUNE_RETURN_IF_ERROR(registry_.SetConstLabel("node", settings_.node_name));
  if (settings_.redis) {
    redis_ = std::make_unique<RedisExchange>(*settings_.redis, collector_,
                                             [this](std::vector<MatchedCall> calls, int rank) {
                                               std::lock_guard<std::mutex> lock(mu_);
                                               matched_.emplace_back(std::move(calls), rank);
                                             });
    redis_->Start();
  }
  drain_ = std::make_unique<StoppableThread>([this](const StopSignal& stop) {
    bool last = false;
    while (!last) {
      last = stop.WaitFor(kDrainInterval);
      DrainStep(last);
    }
  });
  return core::Status::Ok();
}

void ProgramTelemetry::CommInit(const CommInfo& comm) {
  std::lock_guard<std::mutex> lock(mu_);
  comms_.try_emplace(comm.comm_hash, comm);  // later inits of the same hash change nothing
  if (!first_comm_) first_comm_ = comm;
}

void ProgramTelemetry::RecordCall(CallRecord&& call) { queue_.TryPush(std::move(call)); }

void ProgramTelemetry::DrainStep(bool last) {
  std::map<std::uint64_t, CommInfo> comms;
  {
    std::lock_guard<std::mutex> lock(mu_);
    comms = comms_;
  }
  CallRecord call;
  while (queue_.TryPop(&call)) Observe(call, comms);
  ApplyMatched();
  ReportQueueDrops();
  UpdateRatios();
  if (!last) StartExport();
}

void ProgramTelemetry::Observe(const CallRecord& call,
                               const std::map<std::uint64_t, CommInfo>& comms) {
  auto comm = comms.find(call.comm_hash);
  if (comm == comms.end()) return metrics_->Dropped("unknown-comm", 1);
  const int rank = comm->second.rank;
  metrics_->ObserveCall(call, rank);
  // An untimed record only counts: no time to split, and its seq (if any) must not tell the
  // matcher that a sampled window is over before its timed calls came.
  if (!HasTimes(call)) return;
  if (call.split == ccltuneTelemetrySplitKernel)
    ratio_.Add(call.comm_hash, rank, WholeSeconds(Clock::now()), call.wait_ns, call.total_ns);
  const bool matchable = redis_ != nullptr && call.split == ccltuneTelemetrySplitNone &&
                         comm->second.nranks > 1 && SourceOf(call.choice) == "nccl";
  if (matchable && !collector_.Add(comm->second, call, Clock::now()))
    metrics_->Dropped("match-backlog", 1);
}

void ProgramTelemetry::ApplyMatched() {
  std::vector<std::pair<std::vector<MatchedCall>, int>> matched;
  {
    std::lock_guard<std::mutex> lock(mu_);
    matched.swap(matched_);
  }
  const std::int64_t second = WholeSeconds(Clock::now());
  for (const auto& [calls, rank] : matched) {
    for (const MatchedCall& m : calls) {
      metrics_->ObserveSplit(m.call, rank, ccltuneTelemetrySplitMinOverRanks, m.wait_ns,
                             m.transfer_ns);
      ratio_.Add(m.call.comm_hash, rank, second, m.wait_ns, m.call.total_ns);
    }
  }
}

void ProgramTelemetry::ReportQueueDrops() {
  const std::uint64_t dropped = queue_.TakeDropped();
  if (dropped == 0) return;
  metrics_->Dropped("queue-full", dropped);
  if (!said_queue_full_)
    core::LogWarn("telemetry: the call queue (" + std::to_string(queue_.capacity()) +
                  " calls, CCLTUNE_TELEMETRY_QUEUE) is full: calls are dropped and counted in "
                  "ccltune_program_telemetry_dropped_total{what=\"queue-full\"}; said once");
  said_queue_full_ = true;
}

void ProgramTelemetry::UpdateRatios() {
  const std::int64_t second = WholeSeconds(Clock::now());
  if (second == ratio_second_) return;
  ratio_second_ = second;
  for (const WaitRatio::Ratio& r : ratio_.Ratios(second))
    metrics_->SetWaitRatio(r.comm_hash, r.rank, r.ratio);
}

void ProgramTelemetry::StartExport() {
  if (export_started_) return;
  std::optional<int> local_rank = settings_.local_rank;
  if (!local_rank) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!first_comm_) return;  // the port waits for the first communicator's device
    local_rank = first_comm_->cuda_device >= 0 ? first_comm_->cuda_device : 0;
  }
  export_started_ = true;
  if (settings_.metrics_port != 0) {
    auto port = EndpointPort(settings_.metrics_port, *local_rank);
    auto endpoint = port.ok() ? Endpoint::Start(registry_, *port) : port.status();
    if (endpoint.ok()) {
      endpoint_ = std::move(endpoint).value();
    } else {
      core::LogWarn("telemetry: no /metrics endpoint: " + endpoint.status().message() +
                    " (pushes, if set, go on)");
    }
  }
  if (settings_.push)
    pusher_ = std::make_unique<Pusher>(registry_, *settings_.push, PodOrHost(settings_.pod_name),
                                       *local_rank, settings_.push_seconds);
}

void ProgramTelemetry::Shutdown(Clock::time_point deadline) {
  if (redis_ != nullptr) redis_->Stop(std::min(deadline, Clock::now() + kRedisTimeout));
  // The export's parts belong to the draining thread until it has ended.
  if (drain_ == nullptr || !drain_->Stop(deadline)) return;
  drain_.reset();
  if (pusher_ != nullptr) pusher_->Stop(deadline);
  endpoint_.reset();
}

}  // namespace ccltune::telemetry

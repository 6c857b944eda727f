#include "core/telemetry/program_metrics.h"

#include <bit>
#include <cstdio>

#include "core/base/sizes.h"

namespace ccltune::telemetry {
namespace {

// 1 us to 1 s, 1-2-5 per decade (design §13).
// Written out: multiplying by 10 would give bounds like 1.0000000000000002e-05.
std::vector<double> SecondsBuckets() {
  return {1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3,
          2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 1e-1, 2e-1, 5e-1, 1};
}

core::FamilyOptions Options(const char* name, const char* help, std::vector<std::string> labels,
                            bool histogram = false) {
  return {name, help, std::move(labels), kMaxLabelSets,
          histogram ? SecondsBuckets() : std::vector<double>{}};
}

// Division, not * 1e-9: 4000 ns reads 4e-06, not 4.0000000000000003e-06.
double Seconds(std::uint64_t ns) { return static_cast<double>(ns) / 1e9; }

}  // namespace

std::string CommLabel(std::uint64_t comm_hash) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(comm_hash));
  return text;
}

std::string SizeLabel(std::uint64_t bytes) {
  if (bytes == 0) return "0";
  const std::uint64_t below = std::bit_floor(bytes);
  if (below == bytes || below == (1ull << 63)) return core::FormatSize(below);
  return core::FormatSize(bytes - below < 2 * below - bytes ? below : 2 * below);
}

std::string SourceOf(const std::string& choice) {
  return choice == "nccl" || choice.rfind("nccl:", 0) == 0 ? "nccl" : "ccltune";
}

const char* MethodLabel(ccltuneTelemetrySplit_t split) {
  switch (split) {
    case ccltuneTelemetrySplitKernel:
      return "kernel";
    case ccltuneTelemetrySplitMinOverRanks:
      return "min-over-ranks";
    default:
      return "none";
  }
}

core::Result<std::unique_ptr<ProgramMetrics>> ProgramMetrics::Create(core::Registry& r) {
  std::unique_ptr<ProgramMetrics> m(new ProgramMetrics());
  const std::vector<std::string> call = {"comm", "rank", "op", "dtype", "size", "choice"};
  auto with = [&](std::string extra) {
    std::vector<std::string> labels = call;
    labels.push_back(std::move(extra));
    return labels;
  };
  CCLTUNE_ASSIGN_OR_RETURN(
      m->collective_,
      r.AddHistogram(Options("ccltune_program_collective_seconds",
                             "GPU time of a collective call on this rank.", with("source"), true)));
  CCLTUNE_ASSIGN_OR_RETURN(
      m->sync_wait_,
      r.AddHistogram(Options("ccltune_program_sync_wait_seconds",
                             "Part of a call spent waiting for the last rank to arrive.",
                             with("method"), true)));
  CCLTUNE_ASSIGN_OR_RETURN(
      m->transfer_, r.AddHistogram(Options("ccltune_program_transfer_seconds",
                                           "Part of a call spent moving data, after the wait.",
                                           with("method"), true)));
  CCLTUNE_ASSIGN_OR_RETURN(
      m->calls_, r.AddCounter(Options("ccltune_program_calls_total", "Collective calls recorded.",
                                      {"comm", "rank", "op", "choice", "source"})));
  CCLTUNE_ASSIGN_OR_RETURN(
      m->forwarded_,
      r.AddCounter(Options("ccltune_program_forwarded_calls_total",
                           "Calls a ccltune library forwarded to NCCL unchanged, by why.",
                           {"reason"})));
  CCLTUNE_ASSIGN_OR_RETURN(
      m->wait_ratio_,
      r.AddGauge(Options("ccltune_program_sync_wait_ratio",
                         "Sync wait over collective time of the calls with a split, last 10 s.",
                         {"comm", "rank"})));
  CCLTUNE_ASSIGN_OR_RETURN(
      m->tuned_,
      r.AddGauge(Options("ccltune_program_tuned_seconds", "The winner's tuned time for a size.",
                         {"comm", "op", "dtype", "size", "choice"})));
  CCLTUNE_ASSIGN_OR_RETURN(m->dropped_,
                           r.AddCounter(Options("ccltune_program_telemetry_dropped_total",
                                                "Call records lost, by where.", {"what"})));
  return m;
}

void ProgramMetrics::ObserveCall(const CallRecord& c, int rank) {
  const std::string comm = CommLabel(c.comm_hash), r = std::to_string(rank);
  const std::string source = SourceOf(c.choice);
  if (CountsCall(c)) calls_->WithLabels({comm, r, c.op, c.choice, source}).Increment();
  if (!HasTimes(c)) return;
  collective_->WithLabels({comm, r, c.op, c.dtype, SizeLabel(c.bytes), c.choice, source})
      .Observe(Seconds(c.total_ns));
  if (c.split == ccltuneTelemetrySplitKernel)
    ObserveSplit(c, rank, c.split, c.wait_ns, c.transfer_ns);
}

void ProgramMetrics::ObserveSplit(const CallRecord& c, int rank, ccltuneTelemetrySplit_t method,
                                  std::uint64_t wait_ns, std::uint64_t transfer_ns) {
  const std::vector<std::string> labels = {
      CommLabel(c.comm_hash), std::to_string(rank), c.op, c.dtype, SizeLabel(c.bytes), c.choice,
      MethodLabel(method)};
  sync_wait_->WithLabels(labels).Observe(Seconds(wait_ns));
  transfer_->WithLabels(labels).Observe(Seconds(transfer_ns));
}

void ProgramMetrics::SetWaitRatio(std::uint64_t comm_hash, int rank, double ratio) {
  wait_ratio_->WithLabels({CommLabel(comm_hash), std::to_string(rank)}).Set(ratio);
}

void ProgramMetrics::Forwarded(const std::string& reason, std::uint64_t n) {
  forwarded_->WithLabels({reason}).Increment(static_cast<double>(n));
}

void ProgramMetrics::Dropped(const std::string& what, std::uint64_t n) {
  dropped_->WithLabels({what}).Increment(static_cast<double>(n));
}

void ProgramMetrics::Tuned(std::uint64_t comm_hash, const std::string& op, const std::string& dtype,
                           std::uint64_t bytes, const std::string& choice, double seconds) {
  tuned_->WithLabels({CommLabel(comm_hash), op, dtype, SizeLabel(bytes), choice}).Set(seconds);
}

}  // namespace ccltune::telemetry

// ProgramMetrics: the families of docs/design.md §13 on a ccltune::metrics Registry, each
// labelled family capped at kMaxLabelSets, and the label values they take: `comm` as 16 hex
// digits, `size` as the bytes rounded to the nearest power of two ("256KiB"), `source` from
// the choice's name.
// Thread-safety: every method may be called from any thread (the Registry's children are).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/base/status.h"
#include "core/metrics/metrics.h"
#include "core/telemetry/call_record.h"

namespace ccltune::telemetry {

inline constexpr std::size_t kMaxLabelSets = 512;

// "00000000deadbeef".
std::string CommLabel(std::uint64_t comm_hash);
// The nearest power of two (ties go up), as core::FormatSize writes it: 3000 -> "2KiB",
// 1 -> "1", 0 -> "0".
std::string SizeLabel(std::uint64_t bytes);
// "nccl" for NCCL's pick ("nccl") and NCCL's own calls ("nccl:algo=...,proto=..."), else
// "ccltune" (our kernels): the ABI's call carries no source, its choice names who ran it.
std::string SourceOf(const std::string& choice);
// "kernel" / "min-over-ranks" / "none".
const char* MethodLabel(ccltuneTelemetrySplit_t split);

class ProgramMetrics {
 public:
  // Errors: a family the registry refuses (a name already there).
  static core::Result<std::unique_ptr<ProgramMetrics>> Create(core::Registry& registry);

  // A call as recorded: its count (unless flagged COUNTED: counted before), its collective
  // time and its split when it has one (unless flagged UNTIMED: a count only).
  void ObserveCall(const CallRecord& call, int rank);
  // A split learnt later (min-over-ranks), for a call already counted by ObserveCall.
  void ObserveSplit(const CallRecord& call, int rank, ccltuneTelemetrySplit_t method,
                    std::uint64_t wait_ns, std::uint64_t transfer_ns);
  void SetWaitRatio(std::uint64_t comm_hash, int rank, double ratio);
  void Forwarded(const std::string& reason, std::uint64_t n);
  void Dropped(const std::string& what, std::uint64_t n);
  void Tuned(std::uint64_t comm_hash, const std::string& op, const std::string& dtype,
             std::uint64_t bytes, const std::string& choice, double seconds);

 private:
  ProgramMetrics() = default;
  core::Family<core::Histogram>* collective_ = nullptr;
  core::Family<core::Histogram>* sync_wait_ = nullptr;
  core::Family<core::Histogram>* transfer_ = nullptr;
  core::Family<core::Counter>* calls_ = nullptr;
  core::Family<core::Counter>* forwarded_ = nullptr;
  core::Family<core::Gauge>* wait_ratio_ = nullptr;
  core::Family<core::Gauge>* tuned_ = nullptr;
  core::Family<core::Counter>* dropped_ = nullptr;
};

}  // namespace ccltune::telemetry

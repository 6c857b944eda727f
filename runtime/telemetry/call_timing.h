// One communicator's telemetry (issue 45, docs/design.md §13): the ring its peer kernels
// time themselves into, the launch sites they name, the calls it forwarded to NCCL and why,
// and the thread that drains the ring into libccltune-telemetry.
//
// Sites: a launch carries a small number (PeerTeam::site) instead of what it is, so a CUDA
// graph's captured launches report every replay without a host call. Each launch signature
// (choice, op, dtype, redop, count) is registered once; at most kMaxSites, past which
// launches still run, untimed, and are counted dropped.
//
// Thread-safety: Site and Forwarded may be called from any thread (one lock, held for a
// map lookup). Blocking: neither waits for the GPU or I/O; the drain thread does, on its
// own stream, in relaxed capture mode.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "core/gpu/timing_ring.h"
#include "core/plan/types.h"
#include "runtime/telemetry/telemetry_link.h"

namespace ccltune::runtime {

class CallTiming {
 public:
  static constexpr unsigned int kMaxSites = 4096;
  static constexpr unsigned int kNoSite = 0xffffffffu;

  struct Identity {
    std::uint64_t comm_hash = 0;  // equal on every rank of the communicator
    int rank = 0;
    int world = 1;
    int device = 0;
  };
  // Null when telemetry is off; a ring that cannot be had costs one line and the timing of
  // our kernels (forwarded calls are still counted).
  static std::unique_ptr<CallTiming> Start(const TelemetryApi& api, const Identity& id);
  ~CallTiming();  // a last drain, then the thread stops
  CallTiming(const CallTiming&) = delete;
  CallTiming& operator=(const CallTiming&) = delete;

  // What a launch of `signature` writes into (PeerTeam::timing and ::site); timing null
  // when there is no ring or no site left.
  struct Launch {
    kernels::TimingRing* timing = nullptr;
    unsigned int site = kNoSite;
  };
  Launch Site(const std::string& signature, core::Op op, core::Dtype dtype, std::uint64_t bytes,
              std::string_view choice);
  // One call left to NCCL, and why (the runtime's reason text, or "nccl" when NCCL's own
  // choice won that size).
  void Forwarded(std::string_view reason);
  // The tuned time of what a size runs, for the dashboard's comparison.
  void Tuned(core::Op op, core::Dtype dtype, std::uint64_t bytes, std::string_view choice,
             double seconds) const;

 private:
  struct SiteInfo {
    std::string op, dtype, choice;
    std::uint64_t bytes = 0;
  };
  CallTiming(const TelemetryApi& api, const Identity& id) : api_(api), id_(id) {}
  void Loop();
  bool DrainOnce();  // false once the ring cannot be read any more (said once)
  void Publish(const gpu::TimingRingReader::Launch& r, const SiteInfo& site);
  void FlushCounts();

  const TelemetryApi& api_;
  const Identity id_;
  std::unique_ptr<gpu::TimingRingReader> ring_;
  std::mutex mu_;
  std::unordered_map<std::string, unsigned int> ids_;
  std::deque<SiteInfo> sites_;  // by id; a deque: references stay valid as it grows
  std::map<std::string, std::uint64_t, std::less<>> forwarded_;
  std::uint64_t unsited_ = 0;  // launches past kMaxSites
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

// FNV-1a of the clique key every rank agreed on: the communicator's `comm` label.
std::uint64_t CommHash(std::string_view clique);

}  // namespace ccltune::runtime

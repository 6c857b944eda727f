// One communicator's telemetry (call_timing.h).
#include "runtime/telemetry/call_timing.h"

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <limits>
#include <vector>

namespace ccltune::runtime {
namespace {

// Drained every 20 ms: 8192 records per ring hold 400k launches a second, far above what one
// communicator issues (a graph-replayed decode step: tens of thousands).
constexpr auto kDrainPeriod = std::chrono::milliseconds(20);
constexpr double kDrainDeadlineSeconds = 2;

}  // namespace

std::uint64_t CommHash(std::string_view clique) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a's 64-bit offset basis
  for (const char c : clique) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

std::unique_ptr<CallTiming> CallTiming::Start(const TelemetryApi& api, const Identity& id) {
  std::unique_ptr<CallTiming> t(new CallTiming(api, id));
  const ccltuneTelemetryComm_t comm{sizeof(ccltuneTelemetryComm_t), id.comm_hash, id.rank, id.world,
                                    id.device};
  api.comm_init(&comm);
  core::Result<std::unique_ptr<gpu::TimingRingReader>> ring = gpu::TimingRingReader::Create();
  if (ring.ok()) {
    t->ring_ = std::move(ring).value();
  } else {
    std::fprintf(stderr,
                 "ccltune: telemetry: no timing ring for rank %d (%s): our kernels' calls "
                 "are not timed\n",
                 id.rank, ring.status().ToString().c_str());
  }
  t->thread_ = std::thread([p = t.get()] { p->Loop(); });
  return t;
}

CallTiming::~CallTiming() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

CallTiming::Launch CallTiming::Site(const std::string& signature, core::Op op, core::Dtype dtype,
                                    std::uint64_t bytes, std::string_view choice) {
  if (ring_ == nullptr) return {};
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = ids_.find(signature); it != ids_.end()) return {ring_->ring(), it->second};
  if (sites_.size() >= kMaxSites) {
    ++unsited_;
    return {};
  }
  const auto id = static_cast<unsigned int>(sites_.size());
  sites_.push_back({core::OpName(op), core::DtypeName(dtype), std::string(choice), bytes});
  ids_.emplace(signature, id);
  return {ring_->ring(), id};
}

void CallTiming::Forwarded(std::string_view reason) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = forwarded_.find(reason);
  if (it == forwarded_.end()) it = forwarded_.emplace(std::string(reason), 0).first;
  ++it->second;
}

void CallTiming::Tuned(core::Op op, core::Dtype dtype, std::uint64_t bytes, std::string_view choice,
                       double seconds) const {
  const std::string c(choice);
  api_.tuned(id_.comm_hash, core::OpName(op), core::DtypeName(dtype), bytes, c.c_str(), seconds);
}

void CallTiming::Loop() {
  cudaSetDevice(id_.device);
  // The program may capture a graph in global mode on another thread: this thread's own
  // copies and stream queries must not count as unsafe calls during it.
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  cudaThreadExchangeStreamCaptureMode(&mode);
  bool ring_ok = ring_ != nullptr;
  for (;;) {
    bool stopping = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      stopping = cv_.wait_for(lock, kDrainPeriod, [this] { return stop_; });
    }
    if (ring_ok) ring_ok = DrainOnce();
    FlushCounts();
    if (stopping) return;
  }
}

bool CallTiming::DrainOnce() {
  core::Result<gpu::TimingRingReader::Drained> d =
      ring_->Drain(core::DeadlineIn(kDrainDeadlineSeconds));
  if (!d.ok()) {
    std::fprintf(stderr, "ccltune: telemetry: rank %d stops reading its kernels' timings: %s\n",
                 id_.rank, d.status().ToString().c_str());
    return false;
  }
  if (d->lost > 0) api_.dropped("kernel-ring-full", d->lost);
  // Each record's site, under one lock for the whole drain; the references stay valid after
  // it (sites_ is a deque that only grows).
  std::vector<const SiteInfo*> sites(d->records.size(), nullptr);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (std::size_t i = 0; i < sites.size(); ++i) {
      const unsigned int id = d->records[i].site;
      if (id < sites_.size()) sites[i] = &sites_[id];  // always: registered before launch
    }
  }
  for (std::size_t i = 0; i < sites.size(); ++i)
    if (sites[i] != nullptr) Publish(d->records[i], *sites[i]);
  return true;
}

void CallTiming::Publish(const gpu::TimingRingReader::Launch& r, const SiteInfo& site) {
  ccltuneTelemetryCall_t call{};
  call.size = sizeof(call);
  call.comm_hash = id_.comm_hash;
  call.op = site.op.c_str();
  call.dtype = site.dtype.c_str();
  call.bytes = site.bytes;
  call.choice = site.choice.c_str();
  call.seq = std::numeric_limits<std::uint64_t>::max();
  call.total_ns = r.finish - r.entry;
  call.channels = static_cast<int>(r.blocks);
  if (r.arrival >= r.entry && r.arrival <= r.finish && r.arrival != 0) {
    call.split = ccltuneTelemetrySplitKernel;
    call.wait_ns = r.arrival - r.entry;
    call.transfer_ns = r.finish - r.arrival;
  }
  api_.record_call(&call);
}

void CallTiming::FlushCounts() {
  std::map<std::string, std::uint64_t, std::less<>> forwarded;
  std::uint64_t unsited = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    forwarded.swap(forwarded_);
    std::swap(unsited, unsited_);
  }
  for (const auto& [reason, n] : forwarded) api_.forwarded(reason.c_str(), n);
  if (unsited > 0) api_.dropped("kernel-sites-full", unsited);
}

}  // namespace ccltune::runtime

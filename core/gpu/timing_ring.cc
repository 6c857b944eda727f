// The self-timing ring's host side (timing_ring.h).
#include "core/gpu/timing_ring.h"

#include <algorithm>
#include <cstring>

#include "core/gpu/cuda_check.h"

namespace ccltune::gpu {
namespace {

using kernels::kTimingRecords;
using kernels::TimingRecord;
using kernels::TimingRing;

constexpr std::size_t kHostBytes = sizeof(std::uint64_t) + kTimingRecords * sizeof(TimingRecord);

}  // namespace

core::Result<std::unique_ptr<TimingRingReader>> TimingRingReader::Create() {
  std::unique_ptr<TimingRingReader> r(new TimingRingReader());
  CCLTUNE_ASSIGN_OR_RETURN(r->ring_, DeviceBuffer::Allocate(sizeof(TimingRing), MemoryKind::kCuda));
  CCLTUNE_ASSIGN_OR_RETURN(r->host_, MappedHost::Allocate(kHostBytes));
  CCLTUNE_ASSIGN_OR_RETURN(r->stream_, Stream::Create());
  TimingRing* ring = r->ring();
  CCLTUNE_CUDA_TRY(cudaMemsetAsync(ring, 0, sizeof(TimingRing), r->stream_.get()));
  CCLTUNE_CUDA_TRY(cudaMemsetAsync(&ring->entry, 0xff, sizeof(ring->entry), r->stream_.get()));
  CCLTUNE_RETURN_IF_ERROR(r->Sync(core::DeadlineIn(10)));
  return r;
}

core::Status TimingRingReader::Sync(core::Deadline deadline) {
  return WaitStreamIdle(stream_.get(), deadline, "timing ring drain");
}

core::Result<std::uint64_t> TimingRingReader::ReadHead(core::Deadline deadline) {
  CCLTUNE_CUDA_TRY(cudaMemcpyAsync(host_.host(), &ring()->head, sizeof(std::uint64_t),
                                   cudaMemcpyDeviceToHost, stream_.get()));
  CCLTUNE_RETURN_IF_ERROR(Sync(deadline));
  std::uint64_t head = 0;
  std::memcpy(&head, host_.host(), sizeof(head));
  return head;
}

// Records [from, to) into the host buffer at their ring positions (two copies when the
// range wraps).
core::Status TimingRingReader::CopyRecords(std::uint64_t from, std::uint64_t to) {
  auto* host =
      reinterpret_cast<TimingRecord*>(static_cast<char*>(host_.host()) + sizeof(std::uint64_t));
  while (from < to) {
    const std::uint64_t at = from % kTimingRecords;
    const std::uint64_t n = std::min<std::uint64_t>(to - from, kTimingRecords - at);
    CCLTUNE_CUDA_TRY(cudaMemcpyAsync(host + at, &ring()->records[at], n * sizeof(TimingRecord),
                                     cudaMemcpyDeviceToHost, stream_.get()));
    from += n;
  }
  return core::Status::Ok();
}

core::Result<TimingRingReader::Drained> TimingRingReader::Drain(core::Deadline deadline) {
  Drained out;
  CCLTUNE_ASSIGN_OR_RETURN(const std::uint64_t head, ReadHead(deadline));
  if (head == tail_) return out;
  if (head - tail_ > kTimingRecords) {  // overwritten before this drain began
    out.lost += head - tail_ - kTimingRecords;
    tail_ = head - kTimingRecords;
  }
  CCLTUNE_RETURN_IF_ERROR(CopyRecords(tail_, head));
  CCLTUNE_ASSIGN_OR_RETURN(const std::uint64_t after, ReadHead(deadline));
  const auto* host = reinterpret_cast<const TimingRecord*>(static_cast<const char*>(host_.host()) +
                                                           sizeof(std::uint64_t));
  out.records.reserve(head - tail_);
  for (std::uint64_t i = tail_; i < head; ++i) {
    if (i + kTimingRecords <= after) {
      ++out.lost;  // a launch in flight during the copy may have rewritten its slot
      continue;
    }
    out.records.push_back(host[i % kTimingRecords]);
  }
  tail_ = head;
  return out;
}

}  // namespace ccltune::gpu

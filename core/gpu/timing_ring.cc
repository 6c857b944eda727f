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

bool TimingRingReader::Decode(std::uint64_t i, Launch* out, bool* newer) const {
  const auto* host = reinterpret_cast<const TimingRecord*>(static_cast<const char*>(host_.host()) +
                                                           sizeof(std::uint64_t));
  const TimingRecord& r = host[i % kTimingRecords];
  const auto want = static_cast<unsigned int>(i) + 1u;
  // Numbers compare modulo 2^32: a later launch's is ahead of `want`.
  *newer = static_cast<int>(r.seq - want) > 0 || static_cast<int>(r.seq_again - want) > 0;
  if (r.seq != want || r.seq_again != want) return false;
  out->entry = r.entry;
  out->arrival = r.arrival_ns == kernels::kNoArrival ? 0 : r.entry + r.arrival_ns;
  out->finish = r.entry + r.finish_ns;
  out->site = r.site;
  out->blocks = r.blocks;
  return true;
}

core::Result<TimingRingReader::Drained> TimingRingReader::Drain(core::Deadline deadline) {
  Drained out;
  CCLTUNE_ASSIGN_OR_RETURN(const std::uint64_t head, ReadHead(deadline));
  if (head <= tail_) return out;
  if (head - tail_ > kTimingRecords) {  // overwritten before this drain began
    out.lost += head - tail_ - kTimingRecords;
    tail_ = head - kTimingRecords;
  }
  CCLTUNE_RETURN_IF_ERROR(CopyRecords(tail_, head));
  CCLTUNE_RETURN_IF_ERROR(Sync(deadline));
  out.records.reserve(head - tail_);
  for (; tail_ < head; ++tail_) {
    Launch l;
    bool newer = false;
    if (Decode(tail_, &l, &newer)) {
      out.records.push_back(l);
    } else if (newer) {
      ++out.lost;  // a later launch rewrote its slot during the copy
    } else {
      break;  // not visible yet: read again from here next time
    }
  }
  return out;
}

}  // namespace ccltune::gpu

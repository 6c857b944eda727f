// The host side of a team's self-timing ring (kernels::TimingRing, peer_kernels.h): the
// ring in device memory and the drain that reads what the kernels wrote, without touching
// the application's streams (issue 45, docs/design.md §13).
//
// Drain protocol, on a non-blocking stream of its own: copy head, copy the records in
// [tail, head), copy head again (each copy completes before the next: one stream). A record
// i is kept only when no launch could have overwritten it meanwhile: a launch writing
// record j overwrites record j - kTimingRecords, and the launches in flight during the copy
// write records below the second head + 1, so record i is lost when i + kTimingRecords <=
// the second head. Records a full ring overwrote before a drain are counted lost too.
//
// Thread-safety: one thread drains (Drain is not reentrant); kernels write concurrently.
// Blocking: Drain waits for its own three small copies only (bounded by `deadline`),
// never for the application's work. The calling thread should be in relaxed stream-capture
// mode (cudaThreadExchangeStreamCaptureMode) so that a program capturing a CUDA graph in
// global mode on another thread is not disturbed by the synchronisation.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/base/deadline.h"
#include "core/base/status.h"
#include "core/gpu/cuda_resources.h"
#include "core/kernels/peer_kernels.h"

namespace ccltune::gpu {

class TimingRingReader {
 public:
  // A zeroed ring (entry's running value at ~0) on the current device.
  static core::Result<std::unique_ptr<TimingRingReader>> Create();

  // What the kernels write into: PeerTeam::timing.
  kernels::TimingRing* ring() const { return static_cast<kernels::TimingRing*>(ring_.data()); }

  struct Drained {
    std::vector<kernels::TimingRecord> records;  // oldest first
    std::uint64_t lost = 0;                      // overwritten before they were read
  };
  // The records completed since the previous Drain.
  core::Result<Drained> Drain(core::Deadline deadline);

 private:
  TimingRingReader() = default;
  core::Result<std::uint64_t> ReadHead(core::Deadline deadline);
  core::Status CopyRecords(std::uint64_t from, std::uint64_t to);
  core::Status Sync(core::Deadline deadline);

  DeviceBuffer ring_;
  MappedHost host_;  // the head, then kTimingRecords records: the copies' destination
  Stream stream_;
  std::uint64_t tail_ = 0;  // the next record to read
};

}  // namespace ccltune::gpu

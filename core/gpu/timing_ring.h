// The host side of a team's self-timing ring (kernels::TimingRing, peer_kernels.h): the
// ring in device memory and the drain that reads what the kernels wrote, without touching
// the application's streams (issue 45, docs/design.md §13).
//
// Drain protocol, on a non-blocking stream of its own: copy head (a hint), then the records
// in [tail, head), and keep each record i whose two words both carry its number (i + 1, low
// 32 bits; kernels::TimingRecord): a word of a later number means a launch overwrote it (lost,
// counted), of an earlier number that it is not visible yet (the drain stops there and
// resumes from it next time). Records a full ring overwrote before a drain are counted lost.
//
// Thread-safety: one thread drains (Drain is not reentrant); kernels write concurrently.
// Blocking: Drain waits for its own two copies only (bounded by `deadline`), never for the
// application's work. The calling thread should be in relaxed stream-capture mode
// (cudaThreadExchangeStreamCaptureMode) so that a program capturing a CUDA graph in global
// mode on another thread is not disturbed by the synchronisation.
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
  // A zeroed ring on the current device (no record number is 0).
  static core::Result<std::unique_ptr<TimingRingReader>> Create();

  // What the kernels write into: PeerTeam::timing.
  kernels::TimingRing* ring() const { return static_cast<kernels::TimingRing*>(ring_.data()); }

  // One launch's times (%globaltimer ns); arrival 0: the kernel saw none.
  struct Launch {
    std::uint64_t entry = 0, arrival = 0, finish = 0;
    unsigned int site = 0, blocks = 0;
  };
  struct Drained {
    std::vector<Launch> records;  // oldest first
    std::uint64_t lost = 0;       // overwritten before they were read
  };
  // The records completed since the previous Drain.
  core::Result<Drained> Drain(core::Deadline deadline);

 private:
  TimingRingReader() = default;
  core::Result<std::uint64_t> ReadHead(core::Deadline deadline);
  core::Status CopyRecords(std::uint64_t from, std::uint64_t to);
  // Record i of the host copy, decoded; false when not (yet) whole. *newer: overwritten.
  bool Decode(std::uint64_t i, Launch* out, bool* newer) const;
  core::Status Sync(core::Deadline deadline);

  DeviceBuffer ring_;
  MappedHost host_;  // the head, then kTimingRecords records: the copies' destination
  Stream stream_;
  std::uint64_t tail_ = 0;  // the next record to read
};

}  // namespace ccltune::gpu

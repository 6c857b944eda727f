// CallQueue: the bounded multi-producer, single-consumer queue between a program's threads
// (RecordCall) and the library's thread. TryPush never blocks and never waits for the
// consumer: a full queue refuses the call, and the refusal is counted for the consumer to
// report (ccltune_program_telemetry_dropped_total{what="queue-full"}).
//
// The cells follow D. Vyukov's bounded MPMC queue: each cell's sequence number tells a
// producer whether the cell is free and the consumer whether it is written, so producers
// claim cells with one CAS on the tail and never wait on each other's copies.
// Thread-safety: TryPush from any thread; TryPop and TakeDropped from one thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/telemetry/call_record.h"

namespace ccltune::telemetry {

class CallQueue {
 public:
  // Holds at least `capacity` calls (rounded up to a power of two).
  explicit CallQueue(std::size_t capacity);
  ~CallQueue();
  CallQueue(const CallQueue&) = delete;
  CallQueue& operator=(const CallQueue&) = delete;

  // False (and counted) when the queue is full; `call` is then left as it was.
  bool TryPush(CallRecord&& call);
  // False when the queue is empty.
  bool TryPop(CallRecord* call);
  // The calls refused since the last TakeDropped.
  std::uint64_t TakeDropped() { return dropped_.exchange(0, std::memory_order_relaxed); }

  std::size_t capacity() const { return mask_ + 1; }

 private:
  struct Cell {
    std::atomic<std::size_t> sequence;
    CallRecord call;
  };
  const std::size_t mask_;
  std::unique_ptr<Cell[]> cells_;
  alignas(64) std::atomic<std::size_t> tail_{0};  // producers
  alignas(64) std::size_t head_ = 0;              // the consumer
  alignas(64) std::atomic<std::uint64_t> dropped_{0};
};

}  // namespace ccltune::telemetry

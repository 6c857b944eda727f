#include "core/telemetry/call_queue.h"

#include <bit>

namespace ccltune::telemetry {

CallQueue::CallQueue(std::size_t capacity)
    : mask_(std::bit_ceil(capacity < 2 ? std::size_t{2} : capacity) - 1),
      cells_(new Cell[mask_ + 1]) {
  for (std::size_t i = 0; i <= mask_; ++i) cells_[i].sequence.store(i, std::memory_order_relaxed);
}

CallQueue::~CallQueue() = default;

bool CallQueue::TryPush(CallRecord&& call) {
  std::size_t pos = tail_.load(std::memory_order_relaxed);
  for (;;) {
    Cell& cell = cells_[pos & mask_];
    const std::size_t seq = cell.sequence.load(std::memory_order_acquire);
    const auto diff = static_cast<std::intptr_t>(seq) - static_cast<std::intptr_t>(pos);
    if (diff == 0) {
      if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
        cell.call = std::move(call);
        cell.sequence.store(pos + 1, std::memory_order_release);
        return true;
      }
    } else if (diff < 0) {  // the consumer has not freed this cell yet: full
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    } else {
      pos = tail_.load(std::memory_order_relaxed);
    }
  }
}

bool CallQueue::TryPop(CallRecord* call) {
  Cell& cell = cells_[head_ & mask_];
  if (cell.sequence.load(std::memory_order_acquire) != head_ + 1) return false;
  *call = std::move(cell.call);
  cell.sequence.store(head_ + mask_ + 1, std::memory_order_release);
  ++head_;
  return true;
}

}  // namespace ccltune::telemetry

#include "plugin/profiler/coll_event_pool.h"

namespace ccltune::plugin::profiler {

CollEventPool::CollEventPool(std::size_t capacity, void* owner)
    : slots_(std::make_unique<CollEvent[]>(capacity)), capacity_(capacity) {
  for (std::size_t i = 0; i < capacity_; ++i) slots_[i].owner = owner;
}

CollEvent* CollEventPool::Acquire() {
  // Reserve first: a reservation guarantees a free slot, so the scan below ends, and a full
  // pool costs one atomic add and sub.
  if (in_use_.fetch_add(1, std::memory_order_relaxed) >= capacity_) {
    in_use_.fetch_sub(1, std::memory_order_relaxed);
    return nullptr;
  }
  // Events finish roughly in start order, so the slot after the last one taken is free.
  for (;;) {
    CollEvent& e = slots_[cursor_.fetch_add(1, std::memory_order_relaxed) % capacity_];
    bool expected = false;
    if (e.busy.compare_exchange_strong(expected, true, std::memory_order_acquire)) return &e;
  }
}

void CollEventPool::Release(CollEvent* e) {
  e->channels_started.store(0, std::memory_order_relaxed);
  e->stops_pending.store(0, std::memory_order_relaxed);
  e->first_start.store(kNoStart, std::memory_order_relaxed);
  e->last_stop.store(0, std::memory_order_relaxed);
  e->busy.store(false, std::memory_order_release);
  in_use_.fetch_sub(1, std::memory_order_relaxed);
}

bool CollEventPool::Contains(const void* p) const {
  // As integers: comparing pointers into different objects is unspecified.
  const auto first = reinterpret_cast<std::uintptr_t>(slots_.get());
  const auto c = reinterpret_cast<std::uintptr_t>(p);
  if (c < first || c >= first + capacity_ * sizeof(CollEvent)) return false;
  return (c - first) % sizeof(CollEvent) == 0;
}

}  // namespace ccltune::plugin::profiler

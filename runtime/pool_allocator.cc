// First-fit pool bookkeeping (pool_allocator.h).
#include "runtime/pool_allocator.h"

#include <iterator>

namespace ccltune::runtime {

PoolAllocator::PoolAllocator(std::size_t capacity) : capacity_(capacity / kAlignment * kAlignment) {
  if (capacity_ > 0) free_[0] = capacity_;
}

std::optional<std::size_t> PoolAllocator::Allocate(std::size_t bytes) {
  if (bytes == 0 || bytes > capacity_) return std::nullopt;
  const std::size_t size = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < size) continue;
    const std::size_t offset = it->first;
    const std::size_t rest = it->second - size;
    free_.erase(it);
    if (rest > 0) free_[offset + size] = rest;
    live_[offset] = size;
    return offset;
  }
  return std::nullopt;
}

bool PoolAllocator::Free(std::size_t offset) {
  auto it = live_.find(offset);
  if (it == live_.end()) return false;
  std::size_t start = offset, size = it->second;
  live_.erase(it);
  auto next = free_.lower_bound(start);
  if (next != free_.end() && next->first == start + size) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      size += prev->second;
      free_.erase(prev);
    }
  }
  free_[start] = size;
  return true;
}

std::optional<std::size_t> PoolAllocator::Containing(std::size_t offset, std::size_t bytes) const {
  auto it = live_.upper_bound(offset);
  if (it == live_.begin()) return std::nullopt;
  --it;
  if (offset + bytes > it->first + it->second) return std::nullopt;
  return it->first;
}

std::size_t PoolAllocator::used() const {
  std::size_t n = 0;
  for (const auto& [offset, size] : live_) n += size;
  return n;
}

}  // namespace ccltune::runtime

// Registered segments (segment_registry.h).
#include "runtime/direct/segment_registry.h"

#include <vector>

namespace ccltune::runtime::direct {

SegmentRegistry& SegmentRegistry::Get() {
  static SegmentRegistry* registry = new SegmentRegistry;  // outlives every communicator
  return *registry;
}

void SegmentRegistry::Register(const void* ptr, std::size_t bytes) {
  if (ptr == nullptr || bytes == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  const auto base = reinterpret_cast<std::uintptr_t>(ptr);
  if (auto it = by_base_.find(base); it != by_base_.end()) {
    if (it->second.segment.bytes == bytes) {
      ++it->second.registrations;
      return;
    }
  }
  if (by_base_.size() >= kMaxSegments) return;
  // A range that overlaps one still registered (the program registered a sub-range, or
  // registered again with another size) is not tracked: which one a freeing ends is unclear.
  auto after = by_base_.lower_bound(base);
  if (after != by_base_.end() && after->first < base + bytes) return;
  if (after != by_base_.begin()) {
    const Segment& before = std::prev(after)->second.segment;
    if (before.base + before.bytes > base) return;
  }
  by_base_[base] = Entry{Segment{base, bytes, next_id_++}, 1};
}

void SegmentRegistry::Deregister(const void* ptr) {
  std::optional<Segment> gone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = by_base_.find(reinterpret_cast<std::uintptr_t>(ptr));
    if (it == by_base_.end() || --it->second.registrations > 0) return;
    gone = it->second.segment;
    by_base_.erase(it);
  }
  std::lock_guard<std::mutex> lock(listeners_mu_);
  for (auto& [id, listener] : listeners_) listener(*gone);
}

std::optional<Segment> SegmentRegistry::Find(const void* ptr, std::uint64_t bytes) const {
  const auto at = reinterpret_cast<std::uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_base_.upper_bound(at);
  if (it == by_base_.begin()) return std::nullopt;
  const Segment& s = std::prev(it)->second.segment;
  if (at - s.base > s.bytes || bytes > s.bytes - (at - s.base)) return std::nullopt;
  return s;
}

bool SegmentRegistry::Empty() const {
  std::lock_guard<std::mutex> lock(mu_);
  return by_base_.empty();
}

std::uint64_t SegmentRegistry::Listen(Listener on_gone) {
  std::lock_guard<std::mutex> lock(listeners_mu_);
  const std::uint64_t id = next_listener_++;
  listeners_[id] = std::move(on_gone);
  return id;
}

void SegmentRegistry::Unlisten(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(listeners_mu_);
  listeners_.erase(id);
}

}  // namespace ccltune::runtime::direct

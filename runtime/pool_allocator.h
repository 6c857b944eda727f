// Offsets within the runtime's peer-memory pool: first fit over a sorted free list, so the
// same sequence of Allocate/Free calls gives the same offsets on every rank (the collective
// contract of ccltuneMemAlloc), and a buffer is reachable at one offset in every rank's
// mapping of every peer's pool. Pure bookkeeping (no CUDA); not thread-safe (the caller
// holds the communicator's lock).
#pragma once

#include <cstddef>
#include <map>
#include <optional>

namespace ccltune::runtime {

class PoolAllocator {
 public:
  // 4 KiB: keeps every buffer 16-byte aligned for the vectorized kernels, and a page apart.
  static constexpr std::size_t kAlignment = 4096;

  explicit PoolAllocator(std::size_t capacity);

  // The offset of a new block of at least `bytes` (rounded up to kAlignment), or nullopt
  // when no free range is large enough or bytes is 0.
  std::optional<std::size_t> Allocate(std::size_t bytes);
  // false when `offset` is not the start of a live block.
  bool Free(std::size_t offset);
  // The live block containing [offset, offset + bytes), as its start; nullopt when none.
  std::optional<std::size_t> Containing(std::size_t offset, std::size_t bytes) const;

  std::size_t capacity() const { return capacity_; }
  std::size_t used() const;

 private:
  std::size_t capacity_;
  std::map<std::size_t, std::size_t> free_;  // offset → length, disjoint, coalesced
  std::map<std::size_t, std::size_t> live_;  // offset → length
};

}  // namespace ccltune::runtime

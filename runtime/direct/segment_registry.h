// The program's memory segments that it registered with NCCL (ncclCommRegister; PyTorch does
// it for every segment of its caching allocator with
// TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK=1) or with ccltuneMemRegister. A captured call runs
// on its own buffers only when they lie in registered segments: registration is how ccltune hears,
// synchronously, that a segment is gone (ncclCommDeregister, which the allocator calls when it
// frees one), before the program can reuse its addresses. Process-wide: a segment registered on
// several communicators is live until the last of them deregisters it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>

namespace ccltune::runtime::direct {

struct Segment {
  std::uintptr_t base = 0;
  std::size_t bytes = 0;
  std::uint64_t id = 0;  // unique in the process, never reused: a reused range is a new segment
};

class SegmentRegistry {
 public:
  // More segments than this are not tracked (their calls are staged): bounds the registry.
  static constexpr std::size_t kMaxSegments = 1 << 16;

  static SegmentRegistry& Get();

  void Register(const void* ptr, std::size_t bytes);
  // The registration at `ptr` ends; at the last one the segment is gone and every listener
  // hears it before this returns.
  void Deregister(const void* ptr);
  // The live segment holding [ptr, ptr + bytes), if any.
  std::optional<Segment> Find(const void* ptr, std::uint64_t bytes) const;
  // No segment registered: the program does not register its memory.
  bool Empty() const;

  using Listener = std::function<void(const Segment&)>;
  std::uint64_t Listen(Listener on_gone);
  void Unlisten(std::uint64_t id);

 private:
  struct Entry {
    Segment segment;
    int registrations = 0;
  };
  mutable std::mutex mu_;
  std::map<std::uintptr_t, Entry> by_base_;
  std::uint64_t next_id_ = 1;
  std::mutex listeners_mu_;  // held while listeners run: Unlisten waits for a running one
  std::map<std::uint64_t, Listener> listeners_;
  std::uint64_t next_listener_ = 1;
};

}  // namespace ccltune::runtime::direct

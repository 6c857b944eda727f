// One communicator's collectives in flight, from NCCL's Coll start to its last kernel
// channel's stop, in a fixed-size pool: the plugin never allocates on NCCL's launch path or
// its proxy thread, and a full pool means "not profiled", never a wait.
// Thread-safety: Acquire and Release may be called from any thread (NCCL starts a Coll on
// the launching or host-callback thread and its channels on the proxy thread).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace ccltune::plugin::profiler {

inline constexpr std::uint64_t kNoStart = UINT64_MAX;

struct CollEvent {
  // Set at the Coll's start, before NCCL hands the handle to its proxy thread (NCCL's own
  // queue orders these writes before the channels' events), and read when the last stop
  // comes. Names are literals (nccl_names.h).
  const char* op = nullptr;
  const char* dtype = nullptr;
  const char* choice = nullptr;
  std::uint64_t bytes = 0;
  std::uint64_t seq = 0;
  int channels = 0;  // NCCL's nChannels: the KernelCh events to expect
  // Updated by the channels' events, from NCCL's proxy thread.
  std::atomic<int> channels_started{0};
  std::atomic<int> stops_pending{0};                 // channels + the Coll's own stop
  std::atomic<std::uint64_t> first_start{kNoStart};  // %globaltimer ns, min over channels
  std::atomic<std::uint64_t> last_stop{0};           // max over channels
  std::atomic<bool> busy{false};
  void* owner = nullptr;  // the ProfilerContext: stopEvent gets no context, only the handle
};

class CollEventPool {
 public:
  CollEventPool(std::size_t capacity, void* owner);

  // A free event, or nullptr when `capacity` are in flight. Never blocks.
  CollEvent* Acquire();
  // Back to the pool, its fields reset.
  void Release(CollEvent* event);
  // Whether `p` is one of this pool's events (a parent handle NCCL passes back).
  bool Contains(const void* p) const;

  std::size_t capacity() const { return capacity_; }
  std::size_t in_use() const { return in_use_.load(std::memory_order_relaxed); }

 private:
  std::unique_ptr<CollEvent[]> slots_;
  std::size_t capacity_;
  std::atomic<std::size_t> in_use_{0};
  std::atomic<std::size_t> cursor_{0};
};

}  // namespace ccltune::plugin::profiler

#include "plugin/profiler/duty_cycle.h"

#include <atomic>

namespace ccltune::plugin::profiler {
namespace {

// NCCL's global, not ours: one per process, so one pointer per process (every init passes
// the same address). Never freed: it points into NCCL.
std::atomic<int*> nccl_mask{nullptr};
std::atomic<bool> every_call{false};

}  // namespace

int NextMask(std::uint64_t seq) {
  return every_call.load(std::memory_order_relaxed) ? kSampledMask : MaskFor(seq);
}

void TimeEveryCall(bool every) { every_call.store(every, std::memory_order_relaxed); }

void KeepActivationMask(int* mask) { nccl_mask.store(mask, std::memory_order_release); }

void SetActivationMask(int value) {
  int* mask = nccl_mask.load(std::memory_order_acquire);
  if (mask == nullptr) return;
  // NCCL reads it with __atomic_load_n: the same builtins here. A store only on change keeps
  // the cache line shared between the calling threads most of the time.
  if (__atomic_load_n(mask, __ATOMIC_RELAXED) != value)
    __atomic_store_n(mask, value, __ATOMIC_RELAXED);
}

}  // namespace ccltune::plugin::profiler

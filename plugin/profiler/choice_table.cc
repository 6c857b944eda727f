#include "plugin/profiler/choice_table.h"

#include "plugin/profiler/nccl_names.h"

namespace ccltune::plugin::profiler {
namespace {

// A slot's word: bytes (44 bits, up to 16 TiB) | op id (4) | choice id (8) | dtype id (8).
// 0 is an empty slot. Larger calls are not kept (their choice reads "nccl").
constexpr int kChoiceShift = 8;
constexpr int kOpShift = 16;
constexpr int kBytesShift = 20;
constexpr std::uint64_t kMaxBytes = (std::uint64_t{1} << (64 - kBytesShift)) - 1;
constexpr std::uint64_t kKeyMask = ~std::uint64_t{0} << kOpShift;
constexpr int kMaxTries = 8;

std::uint64_t Key(std::uint8_t op, std::uint64_t bytes) {
  return (bytes << kBytesShift) | (std::uint64_t{op & 0xfu} << kOpShift);
}

std::size_t Home(std::uint64_t key) {
  // Fibonacci hashing: sizes are mostly powers of two, whose low bits say nothing.
  return static_cast<std::size_t>((key * 0x9e3779b97f4a7c15ull) >> 56) % ChoiceTable::kSlots;
}

}  // namespace

const char* ChoiceTable::NoteApiCall(std::uint8_t op, std::uint64_t bytes, std::uint8_t dtype_id) {
  const std::uint64_t was = Note(op, bytes, Field::kDtype, dtype_id);
  return ChoiceById(static_cast<std::uint8_t>(was >> kChoiceShift));
}

std::uint8_t ChoiceTable::NoteRan(std::uint8_t op, std::uint64_t bytes, std::uint8_t choice_id) {
  return static_cast<std::uint8_t>(Note(op, bytes, Field::kChoice, choice_id));
}

std::uint64_t ChoiceTable::Note(std::uint8_t op, std::uint64_t bytes, Field field,
                                std::uint8_t value) {
  if (bytes > kMaxBytes) return 0;
  const std::uint64_t key = Key(op, bytes);
  const int shift = field == Field::kDtype ? 0 : kChoiceShift;
  const std::uint64_t clear = ~(std::uint64_t{0xff} << shift);
  const std::size_t home = Home(key);
  for (int tries = 0; tries < kMaxTries; ++tries) {
    // The key's slot if it has one, else the first empty one, else its home slot (evicted).
    std::size_t at = home;
    std::uint64_t cur = slots_[home].load(std::memory_order_relaxed);
    bool found = false, empty_seen = false;
    for (std::size_t i = 0; i < kProbes && !found; ++i) {
      const std::size_t s = (home + i) % kSlots;
      const std::uint64_t w = slots_[s].load(std::memory_order_relaxed);
      found = w != 0 && (w & kKeyMask) == key;
      if (found || (w == 0 && !empty_seen)) {
        at = s;
        cur = w;
        empty_seen = empty_seen || w == 0;
      }
    }
    const std::uint64_t base = found ? cur : key;
    const std::uint64_t next = (base & clear) | (std::uint64_t{value} << shift);
    if (next == cur) return cur;
    if (slots_[at].compare_exchange_weak(cur, next, std::memory_order_relaxed))
      return found ? cur : 0;
  }
  return 0;
}

}  // namespace ccltune::plugin::profiler

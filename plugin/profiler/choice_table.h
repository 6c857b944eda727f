// What one communicator's timed calls taught about its untimed ones, per (op, bytes): the
// algorithm and protocol NCCL last ran (a timed Coll tells it; the untimed calls of the duty
// cycle, which get no Coll event, are counted under it), and the datatype the application's
// call gave (its CollApi event tells it; NCCL's Coll descriptor says ncclInt8 for allGather
// and broadcast, so the timed record takes it from here).
// A fixed table allocated with the context: nothing is allocated on NCCL's threads. Each slot
// is one atomic word (key, choice id, dtype id), so a reader never sees a torn entry; a full
// neighbourhood evicts, and a size seen once too long ago reads as unknown ("nccl").
// Thread-safety: every method from any thread, lock-free (a CAS that keeps losing gives up:
// the entry is best effort).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace ccltune::plugin::profiler {

class ChoiceTable {
 public:
  // The CollApi of a call: notes its datatype and returns the choice last seen for
  // (op, bytes), "nccl" when none was.
  const char* NoteApiCall(std::uint8_t op, std::uint64_t bytes, std::uint8_t dtype_id);
  // A timed Coll: notes the choice that ran and returns the datatype its call gave, 0 when
  // none is known.
  std::uint8_t NoteRan(std::uint8_t op, std::uint64_t bytes, std::uint8_t choice_id);

  static constexpr std::size_t kSlots = 256;
  static constexpr std::size_t kProbes = 4;  // slots one key may take, from its home slot

 private:
  enum class Field { kDtype, kChoice };
  // Sets `field` of the key's entry to `value` (taking a slot if the key has none) and
  // returns the entry as it was (0 when the key had none).
  std::uint64_t Note(std::uint8_t op, std::uint64_t bytes, Field field, std::uint8_t value);

  std::array<std::atomic<std::uint64_t>, kSlots> slots_{};
};

}  // namespace ccltune::plugin::profiler

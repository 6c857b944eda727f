// WaitRatio: ccltune_program_sync_wait_ratio's input, sync wait over collective time of the
// calls with a split, per communicator and rank, over the last kWindowSeconds. Kept in
// one-second slots so that adding a call and reading the ratio cost O(1) per key.
// Not thread-safe: the library's thread owns it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace ccltune::telemetry {

class WaitRatio {
 public:
  static constexpr int kWindowSeconds = 10;

  // `second`: a monotonic clock's whole seconds when the split was observed.
  void Add(std::uint64_t comm_hash, int rank, std::int64_t second, std::uint64_t wait_ns,
           std::uint64_t total_ns);

  struct Ratio {
    std::uint64_t comm_hash;
    int rank;
    double ratio;  // 0 when no call with a split in the window
  };
  // Every key seen so far, over the seconds (second - kWindowSeconds, second].
  std::vector<Ratio> Ratios(std::int64_t second) const;

 private:
  struct Slot {
    std::int64_t second = -1;
    std::uint64_t wait_ns = 0, total_ns = 0;
  };
  std::map<std::pair<std::uint64_t, int>, std::array<Slot, kWindowSeconds>> slots_;
};

}  // namespace ccltune::telemetry

#include "core/telemetry/wait_ratio.h"

namespace ccltune::telemetry {

void WaitRatio::Add(std::uint64_t comm_hash, int rank, std::int64_t second, std::uint64_t wait_ns,
                    std::uint64_t total_ns) {
  Slot& slot = slots_[{comm_hash, rank}][static_cast<std::size_t>(second % kWindowSeconds)];
  if (slot.second != second) slot = Slot{second, 0, 0};  // a slot of an older second: reuse
  slot.wait_ns += wait_ns;
  slot.total_ns += total_ns;
}

std::vector<WaitRatio::Ratio> WaitRatio::Ratios(std::int64_t second) const {
  std::vector<Ratio> out;
  for (const auto& [key, slots] : slots_) {
    double wait = 0, total = 0;
    for (const Slot& slot : slots) {
      if (slot.second <= second - kWindowSeconds || slot.second > second) continue;
      wait += static_cast<double>(slot.wait_ns);
      total += static_cast<double>(slot.total_ns);
    }
    out.push_back({key.first, key.second, total > 0 ? wait / total : 0});
  }
  return out;
}

}  // namespace ccltune::telemetry

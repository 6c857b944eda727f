#include "runtime/staging_plan.h"

namespace ccltune::runtime {

std::optional<std::size_t> StagingPlan::Carve(std::uint64_t bytes) {
  const std::uint64_t size = PartitionAligned(bytes);
  if (size > capacity_ - used_) return std::nullopt;
  const std::size_t at = used_;
  used_ += size;
  return at;
}

std::optional<StagingPlan::Place> StagingPlan::Own(const std::string& signature,
                                                   std::uint64_t bytes) {
  if (auto it = own_.find(signature); it != own_.end()) return Place{it->second, false};
  if (own_.size() >= max_signatures_) return std::nullopt;
  const std::optional<std::size_t> at = Carve(bytes);
  if (!at) return std::nullopt;
  own_[signature] = *at;
  return Place{*at, true};
}

std::optional<StagingPlan::Place> StagingPlan::Shared(std::uint64_t bytes) {
  const std::uint64_t size = PartitionAligned(bytes);
  if (shared_size_ >= size && shared_size_ > 0) return Place{shared_at_, false};
  if (shared_size_ > 0 && shared_at_ + shared_size_ == used_) {  // the last one: grow in place
    if (size > capacity_ - shared_at_) return std::nullopt;
    used_ = shared_at_ + size;
    shared_size_ = size;
    return Place{shared_at_, false};
  }
  const std::optional<std::size_t> at = Carve(size);
  if (!at) return std::nullopt;
  shared_at_ = *at;
  shared_size_ = size;
  return Place{*at, false};
}

}  // namespace ccltune::runtime

// Published records for the runtime's tests, made the way `ccltune tune` publishes them
// (core::ResultRecord, every measured choice with its time) and read the way the runtime
// reads them (apply::WinnerRecordFrom).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/apply/record_parser.h"
#include "core/result.h"

namespace ccltune::runtime {

struct Measured {
  std::string name;
  double time_us;
};

core::ResultRecord MakeResult(core::Op op, core::Dtype dtype, core::RedOp redop,
                              std::uint64_t bytes, int world,
                              const std::vector<Measured>& measured);
// The winner as core::PickWinner picks it (default nccl, 3 % threshold), then parsed.
apply::WinnerRecord MakeRecord(core::Op op, std::uint64_t bytes, int world,
                               const std::vector<Measured>& measured,
                               core::Dtype dtype = core::Dtype::kBf16,
                               core::RedOp redop = core::RedOp::kSum);

}  // namespace ccltune::runtime

// Published records for the runtime's tests, made the way `ccltune tune` publishes them
// (core::ResultRecord, every measured choice with its time) and read the way the runtime
// reads them (apply::WinnerRecordFrom).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/apply/record_parser.h"
#include "core/results/result.h"

namespace ccltune::runtime {

struct Measured {
  std::string name;
  double time_us;
  std::optional<double> host_us = std::nullopt;  // an eager tune's cost to issue it
};

core::ResultRecord MakeResult(core::Op op, core::Dtype dtype, core::RedOp redop,
                              std::uint64_t bytes, int world, const std::vector<Measured>& measured,
                              const core::Epilogue& epilogue = {});
// The winner as core::PickWinner picks it (default nccl, 3 % threshold), then parsed.
apply::WinnerRecord MakeRecord(core::Op op, std::uint64_t bytes, int world,
                               const std::vector<Measured>& measured,
                               core::Dtype dtype = core::Dtype::kBf16,
                               core::RedOp redop = core::RedOp::kSum);
// A bf16 sum all-reduce of `tokens` x e.hidden with epilogue `e`, as an epilogue sweep
// publishes it (its `nccl` is NCCL's all-reduce + the separate kernel).
apply::WinnerRecord MakeEpilogueRecord(const core::Epilogue& e, std::uint64_t tokens, int world,
                                       const std::vector<Measured>& measured);
core::Epilogue RmsNorm(int hidden);

}  // namespace ccltune::runtime

// Test records (record_builder.h).
#include "tests/unit/runtime/record_builder.h"

#include <gtest/gtest.h>

namespace ccltune::runtime {

core::ResultRecord MakeResult(core::Op op, core::Dtype dtype, core::RedOp redop,
                              std::uint64_t bytes, int world, const std::vector<Measured>& measured,
                              const core::Epilogue& epilogue) {
  core::ResultRecord r;
  r.epilogue = epilogue;
  r.fingerprint = "0123456789abcdef";
  r.op = op;
  r.dtype = dtype;
  r.redop = op == core::Op::kAllGather ? core::RedOp::kNone : redop;
  r.bytes = bytes;
  r.world_size = world;
  for (const auto& m : measured)
    r.choices.push_back({m.name, nlohmann::json::object(), m.time_us, m.time_us, m.time_us, 1.0,
                         core::ChoiceStatus::kOk, "", m.host_us});
  EXPECT_TRUE(core::PickWinner(r, "nccl", 3).ok());
  return r;
}

apply::WinnerRecord MakeRecord(core::Op op, std::uint64_t bytes, int world,
                               const std::vector<Measured>& measured, core::Dtype dtype,
                               core::RedOp redop) {
  auto w = apply::WinnerRecordFrom(MakeResult(op, dtype, redop, bytes, world, measured));
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return w.ok() ? *w : apply::WinnerRecord{};
}

apply::WinnerRecord MakeEpilogueRecord(const core::Epilogue& e, std::uint64_t tokens, int world,
                                       const std::vector<Measured>& measured) {
  const std::uint64_t bytes = tokens * static_cast<std::uint64_t>(e.hidden) * 2;
  auto w = apply::WinnerRecordFrom(MakeResult(core::Op::kAllReduce, core::Dtype::kBf16,
                                              core::RedOp::kSum, bytes, world, measured, e));
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return w.ok() ? *w : apply::WinnerRecord{};
}

core::Epilogue RmsNorm(int hidden) {
  core::Epilogue e;
  e.kind = core::EpilogueKind::kResidualRmsNorm;
  e.hidden = hidden;
  return e;
}

}  // namespace ccltune::runtime

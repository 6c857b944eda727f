// Fixture records (records_fixture.h).
#include "tests/unit/export/records_fixture.h"

#include <cmath>

namespace ccltune::testing {

core::ResultRecord FixtureRecord(const std::string& fp, core::Op op, core::Dtype dtype,
                                 std::uint64_t bytes, const std::string& winner) {
  core::ResultRecord r;
  r.fingerprint = fp;
  r.op = op;
  r.dtype = dtype;
  r.redop = core::IsReducing(op) ? core::RedOp::kSum : core::RedOp::kNone;
  r.bytes = bytes;
  r.world_size = 4;
  r.tuned_at = "2026-11-22T08:00:00Z";
  r.job_id = "fixture";
  r.tool_version = "test";
  // Times grow with size, each choice a little apart, so every series has a shape.
  const double base = 5 + static_cast<double>(bytes) / 2e4;
  const std::vector<std::string> names{"nccl", "nccl:algo=ring,proto=ll",
                                       "nccl:algo=tree,proto=simple", winner};
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i == 3 && (winner == "nccl" || winner == names[1] || winner == names[2])) break;
    core::ChoiceResult c;
    c.name = names[i];
    c.time_us = names[i] == winner && winner != "nccl" ? base * 0.8 : base * (1 + 0.1 * i);
    c.min_us = c.time_us * 0.95;
    c.max_us = c.time_us * 1.05;
    c.busbw_gbs = static_cast<double>(bytes) * 1.5 / c.time_us / 1e3;
    r.choices.push_back(c);
  }
  r.winner = winner;
  r.default_time_us = base;
  r.time_us = winner == "nccl" ? base : base * 0.8;
  r.speedup_vs_default = r.default_time_us / r.time_us;
  r.busbw_gbs = static_cast<double>(bytes) * 1.5 / r.time_us / 1e3;
  return r;
}

std::vector<core::ResultRecord> FixtureSet(const std::string& fp) {
  using core::Dtype;
  using core::Op;
  constexpr std::uint64_t K = 1024, M = K * K;
  return {
      FixtureRecord(fp, Op::kAllReduce, Dtype::kBf16, 1 * K, "nccl:algo=tree,proto=ll"),
      FixtureRecord(fp, Op::kAllReduce, Dtype::kBf16, 64 * K, "nccl:algo=ring,ctas=8,proto=ll128"),
      FixtureRecord(fp, Op::kAllReduce, Dtype::kBf16, 1 * M, "oneshot:blocks=8,threads=512"),
      FixtureRecord(fp, Op::kAllReduce, Dtype::kBf16, 16 * M, "nccl"),
      FixtureRecord(fp, Op::kAllReduce, Dtype::kBf16, 64 * M, "nccl:ctas=16"),
      FixtureRecord(fp, Op::kAllReduce, Dtype::kFp32, 1 * K, "nccl:algo=ring,proto=simple"),
      FixtureRecord(fp, Op::kAllGather, Dtype::kFp32, 4 * K, "nccl:algo=ring,proto=ll"),
      FixtureRecord(fp, Op::kAllGather, Dtype::kFp32, 256 * K, "nccl"),
      FixtureRecord(fp, Op::kAllGather, Dtype::kFp32, 4 * M, "nccl:algo=ring,proto=simple"),
  };
}

}  // namespace ccltune::testing

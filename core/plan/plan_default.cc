// The plan `ccltune tune` runs without --plan. The host one is small enough to finish in
// well under a minute on a 2-core laptop with 4 ranks; the nccl one covers the range
// where the choices of docs/design.md §11 differ.
#include "core/plan/plan.h"

namespace ccltune::core {
namespace {

std::vector<std::uint64_t> Geometric(std::uint64_t lo, std::uint64_t hi, std::uint64_t f) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = lo; s <= hi; s *= f) out.push_back(s);
  return out;
}

}  // namespace

Plan DefaultPlan(const std::string& backend) {
  const bool nccl = backend == "nccl";
  const Dtype dtype = nccl ? Dtype::kBf16 : Dtype::kFp32;
  const auto sizes = nccl ? Geometric(1 << 10, 256u << 20, 2) : Geometric(1 << 10, 4 << 20, 4);
  Plan plan;
  for (Op op : {Op::kAllReduce, Op::kAllGather, Op::kReduceScatter}) {
    CollectiveSpec c;
    c.op = op;
    c.dtypes = {dtype};
    c.reduce_op = IsReducing(op) ? RedOp::kSum : RedOp::kNone;
    c.sizes = sizes;
    plan.collectives.push_back(std::move(c));
  }
  plan.benchmark.warmup_iters = nccl ? 5 : 3;
  plan.benchmark.iters = nccl ? 20 : 10;
  plan.benchmark.rounds = 5;
  plan.benchmark.choice_timeout_seconds = 30;
  return plan;
}

}  // namespace ccltune::core

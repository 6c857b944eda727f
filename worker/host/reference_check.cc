#include "worker/host/reference_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "worker/host/data_gen.h"

namespace ccltune::worker::host {
namespace {

// Integers reduce modulo 2^64 and truncate to the dtype: the same wrap the kernels have.
double WrapInt(core::Dtype dtype, std::uint64_t v) {
  if (dtype == core::Dtype::kInt8) return static_cast<std::int8_t>(v);
  return static_cast<std::int32_t>(v);
}

double ReduceInts(const CheckSpec& spec, std::size_t idx) {
  const auto& seeds = spec.seeds;
  std::int64_t first = static_cast<std::int64_t>(InputValue(spec.dtype, seeds[0], idx));
  std::uint64_t acc = static_cast<std::uint64_t>(first);
  std::int64_t best = first;
  for (std::size_t j = 1; j < seeds.size(); ++j) {
    const auto v = static_cast<std::int64_t>(InputValue(spec.dtype, seeds[j], idx));
    if (spec.redop == core::RedOp::kSum || spec.redop == core::RedOp::kAvg) {
      acc += static_cast<std::uint64_t>(v);
    }
    if (spec.redop == core::RedOp::kProd) acc *= static_cast<std::uint64_t>(v);
    best = spec.redop == core::RedOp::kMax ? std::max(best, v) : std::min(best, v);
  }
  const bool arith = spec.redop == core::RedOp::kSum || spec.redop == core::RedOp::kProd ||
                     spec.redop == core::RedOp::kAvg;
  return WrapInt(spec.dtype, arith ? acc : static_cast<std::uint64_t>(best));
}

double ReduceFloats(const CheckSpec& spec, std::size_t idx) {
  double acc = InputValue(spec.dtype, spec.seeds[0], idx);
  for (std::size_t j = 1; j < spec.seeds.size(); ++j) {
    const double v = InputValue(spec.dtype, spec.seeds[j], idx);
    switch (spec.redop) {
      case core::RedOp::kSum:
      case core::RedOp::kAvg:
        acc += v;
        break;
      case core::RedOp::kProd:
        acc *= v;
        break;
      case core::RedOp::kMax:
        acc = std::max(acc, v);
        break;
      default:
        acc = std::min(acc, v);
        break;
    }
  }
  return acc;
}

// Avg: the sum (ReduceInts wraps it to the dtype) over the world; integers truncate toward
// zero, as NCCL's ncclAvg and DivideInPlace do.
double Reduced(const CheckSpec& spec, std::size_t idx) {
  const double r = core::IsFloat(spec.dtype) ? ReduceFloats(spec, idx) : ReduceInts(spec, idx);
  if (spec.redop != core::RedOp::kAvg) return r;
  const double mean = r / static_cast<double>(spec.seeds.size());
  return core::IsFloat(spec.dtype) ? mean : std::trunc(mean);
}

}  // namespace

double Tolerance(core::Dtype dtype) { return core::VerifyTolerance(dtype); }

std::size_t OutputCount(core::Op op, std::size_t count, int world) {
  const bool gathered = op == core::Op::kAllGather || op == core::Op::kAllToAll;
  return gathered ? count * static_cast<std::size_t>(world) : count;
}

double ExpectedElement(const CheckSpec& spec, std::size_t e) {
  const std::size_t c = spec.count;
  const std::size_t my_block = static_cast<std::size_t>(spec.rank) * c;
  switch (spec.op) {
    case core::Op::kAllReduce:
      return Reduced(spec, e);
    case core::Op::kReduceScatter:
      return Reduced(spec, my_block + e);
    case core::Op::kAllGather:
      return InputValue(spec.dtype, spec.seeds[e / c], e % c);
    case core::Op::kAllToAll:
      return InputValue(spec.dtype, spec.seeds[e / c], my_block + e % c);
    case core::Op::kBroadcast:
      return InputValue(spec.dtype, spec.seeds[spec.root], e);
  }
  return 0;
}

core::Status CheckOutput(const CheckSpec& spec, const void* out) {
  const std::size_t n = OutputCount(spec.op, spec.count, static_cast<int>(spec.seeds.size()));
  const double tol = Tolerance(spec.dtype);
  for (std::size_t e = 0; e < n; ++e) {
    const double want = ExpectedElement(spec, e);
    const double got = LoadElement(spec.dtype, out, e);
    const double rel = std::fabs(got - want) / std::max(std::fabs(want), 1e-30);
    if (got == want || (tol > 0 && rel <= tol)) continue;
    char buf[160];
    if (tol > 0) {
      std::snprintf(buf, sizeof(buf),
                    "wrong: element %zu of %zu: got %.9g, want %.9g (rel err "
                    "%.1e > %.0e)",
                    e, n, got, want, rel, tol);
    } else {
      std::snprintf(buf, sizeof(buf), "wrong: element %zu of %zu: got %.0f, want %.0f", e, n, got,
                    want);
    }
    return core::FailedPrecondition(buf);
  }
  return core::Status::Ok();
}

}  // namespace ccltune::worker::host

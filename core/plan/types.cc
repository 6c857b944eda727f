#include "core/plan/types.h"

#include "core/base/name_table.h"

namespace ccltune::core {
namespace {

constexpr NameTable<Op, 5> kOps{{{{Op::kAllReduce, "allReduce"},
                                  {Op::kAllGather, "allGather"},
                                  {Op::kReduceScatter, "reduceScatter"},
                                  {Op::kAllToAll, "allToAll"},
                                  {Op::kBroadcast, "broadcast"}}}};
constexpr NameTable<Dtype, 5> kDtypes{{{{Dtype::kFp32, "fp32"},
                                        {Dtype::kFp16, "fp16"},
                                        {Dtype::kBf16, "bf16"},
                                        {Dtype::kInt32, "int32"},
                                        {Dtype::kInt8, "int8"}}}};
constexpr NameTable<RedOp, 5> kRedOps{{{{RedOp::kSum, "sum"},
                                        {RedOp::kMax, "max"},
                                        {RedOp::kMin, "min"},
                                        {RedOp::kProd, "prod"},
                                        {RedOp::kAvg, "avg"}}}};

}  // namespace

const char* OpName(Op op) { return kOps.Name(op); }
const char* DtypeName(Dtype d) { return kDtypes.Name(d); }
const char* RedOpName(RedOp r) { return r == RedOp::kNone ? "none" : kRedOps.Name(r); }
Result<Op> ParseOp(std::string_view s) { return kOps.Parse(s, "op"); }
Result<Dtype> ParseDtype(std::string_view s) { return kDtypes.Parse(s, "dtype"); }
Result<RedOp> ParseRedOp(std::string_view s) { return kRedOps.Parse(s, "reduceOp"); }
std::string AllowedOps() { return kOps.Allowed(); }
std::string AllowedDtypes() { return kDtypes.Allowed(); }
std::string AllowedRedOps() { return kRedOps.Allowed(); }

const std::vector<Op>& AllOps() {
  static const std::vector<Op> v{Op::kAllReduce, Op::kAllGather, Op::kReduceScatter, Op::kAllToAll,
                                 Op::kBroadcast};
  return v;
}
const std::vector<Dtype>& AllDtypes() {
  static const std::vector<Dtype> v{Dtype::kFp32, Dtype::kFp16, Dtype::kBf16, Dtype::kInt32,
                                    Dtype::kInt8};
  return v;
}
const std::vector<RedOp>& AllRedOps() {
  static const std::vector<RedOp> v{RedOp::kSum, RedOp::kMax, RedOp::kMin, RedOp::kProd,
                                    RedOp::kAvg};
  return v;
}

std::size_t DtypeSize(Dtype d) {
  switch (d) {
    case Dtype::kFp32:
    case Dtype::kInt32:
      return 4;
    case Dtype::kFp16:
    case Dtype::kBf16:
      return 2;
    case Dtype::kInt8:
      return 1;
  }
  return 1;
}

bool IsReducing(Op op) { return op == Op::kAllReduce || op == Op::kReduceScatter; }
bool IsFloat(Dtype d) { return d == Dtype::kFp32 || d == Dtype::kFp16 || d == Dtype::kBf16; }

double VerifyTolerance(Dtype d) {
  switch (d) {
    case Dtype::kFp32:
      return 1e-5;
    case Dtype::kFp16:
    case Dtype::kBf16:
      return 2e-2;
    case Dtype::kInt32:
    case Dtype::kInt8:
      return 0;
  }
  return 0;
}

double BusBwFactor(Op op, int n) {
  switch (op) {
    case Op::kAllReduce:
      return 2.0 * (n - 1) / n;
    case Op::kAllGather:
    case Op::kReduceScatter:
    case Op::kAllToAll:
      return static_cast<double>(n - 1) / n;
    case Op::kBroadcast:
      return 1.0;
  }
  return 1.0;
}

std::uint64_t ElementCount(Op op, Dtype dtype, std::uint64_t bytes, int world_size) {
  const std::uint64_t total = bytes / DtypeSize(dtype);
  if (op == Op::kAllReduce || op == Op::kBroadcast) return total;
  // allToAll splits each rank's buffer into world_size equal blocks as well.
  return total / static_cast<std::uint64_t>(world_size);
}

std::uint64_t EffectiveBytes(Op op, Dtype dtype, std::uint64_t bytes, int world_size) {
  const std::uint64_t count = ElementCount(op, dtype, bytes, world_size);
  const std::uint64_t elems =
      (op == Op::kAllReduce || op == Op::kBroadcast) ? count : count * world_size;
  return elems * DtypeSize(dtype);
}

}  // namespace ccltune::core

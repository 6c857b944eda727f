#include "core/plan/problem.h"

namespace ccltune::core {

std::string ProblemKey(Op op, Dtype dtype, RedOp redop, std::uint64_t bytes,
                       const Epilogue& epilogue) {
  std::string key = std::string(OpName(op)) + ":" + DtypeName(dtype) + ":" + RedOpName(redop) +
                    ":" + std::to_string(bytes);
  if (!epilogue.none()) key += ":" + epilogue.KeyPart();
  return key;
}

std::string Problem::Key() const { return ProblemKey(op, dtype, redop, bytes, epilogue); }

std::vector<Problem> ExpandPlan(const Plan& plan) {
  std::vector<Problem> out;
  for (const auto& c : plan.collectives) {
    for (Dtype dtype : c.dtypes) {
      std::vector<std::uint64_t> sizes = c.sizes;
      if (!c.epilogue.none()) {
        sizes.clear();
        for (std::uint64_t t : c.tokens) sizes.push_back(t * c.epilogue.RowBytes(dtype));
      }
      for (std::uint64_t bytes : sizes) {
        Problem p;
        p.op = c.op;
        p.dtype = dtype;
        // The redop of a non-reducing op is always "none", whatever the spec carries.
        p.redop = IsReducing(c.op) ? c.reduce_op : RedOp::kNone;
        p.bytes = bytes;
        p.choices = c.choices;
        p.epilogue = c.epilogue;
        out.push_back(std::move(p));
      }
    }
  }
  return out;
}

}  // namespace ccltune::core

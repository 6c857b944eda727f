#include "core/problem.h"

namespace ccltune::core {

std::string Problem::Key() const {
  return std::string(OpName(op)) + ":" + DtypeName(dtype) + ":" + RedOpName(redop) + ":" +
         std::to_string(bytes);
}

std::vector<Problem> ExpandPlan(const Plan& plan) {
  std::vector<Problem> out;
  for (const auto& c : plan.collectives) {
    for (Dtype dtype : c.dtypes) {
      for (std::uint64_t bytes : c.sizes) {
        Problem p;
        p.op = c.op;
        p.dtype = dtype;
        // The redop of a non-reducing op is always "none", whatever the spec carries.
        p.redop = IsReducing(c.op) ? c.reduce_op : RedOp::kNone;
        p.bytes = bytes;
        p.choices = c.choices;
        out.push_back(std::move(p));
      }
    }
  }
  return out;
}

}  // namespace ccltune::core

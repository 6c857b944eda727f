// A problem is one (op, dtype, reduce-op, bytes) point of a plan; the unit the bench runner
// measures and the result store keys by.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/plan/epilogue.h"
#include "core/plan/plan.h"
#include "core/plan/types.h"

namespace ccltune::core {

struct Problem {
  Op op = Op::kAllReduce;
  Dtype dtype = Dtype::kFp32;
  RedOp redop = RedOp::kSum;         // kNone for non-reducing ops
  std::uint64_t bytes = 0;           // with an epilogue: tokens x hidden x dtype size
  std::vector<std::string> choices;  // requested choices; empty = all applicable
  Epilogue epilogue;                 // none for a plain collective

  // "allReduce:fp32:sum:4096", with an epilogue
  // "allReduce:bf16:sum:8192:epilogue=residualRmsNorm,hidden=4096" — the suffix of the Redis
  // result key.
  std::string Key() const;
};

// Every problem of the plan, in plan order (collective, dtype, size ascending).
std::vector<Problem> ExpandPlan(const Plan& plan);

// The key of a problem: op:dtype:redop:bytes[:epilogue=kind,hidden=H].
std::string ProblemKey(Op op, Dtype dtype, RedOp redop, std::uint64_t bytes,
                       const Epilogue& epilogue = {});

}  // namespace ccltune::core

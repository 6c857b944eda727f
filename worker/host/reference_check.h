// The host reference: what `rank` must hold after a collective, computed from every rank's
// deterministic input (data_gen.h), and the comparison with the tolerance of docs/design.md §2.5
// (fp32 1e-5 relative, fp16/bf16 2e-2 relative, integers exact, with wrap-around).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/base/status.h"
#include "core/plan/types.h"

namespace ccltune::worker::host {

struct CheckSpec {
  core::Op op = core::Op::kAllReduce;
  core::Dtype dtype = core::Dtype::kFp32;
  core::RedOp redop = core::RedOp::kSum;
  std::size_t count = 0;  // core::ElementCount of the problem
  int rank = 0;
  int root = 0;                      // broadcast
  std::vector<std::uint64_t> seeds;  // input seed of every rank; size = world
};

double Tolerance(core::Dtype dtype);  // relative; 0 for integers
std::size_t OutputCount(core::Op op, std::size_t count, int world);

// The expected value of output element e (exact for integers).
double ExpectedElement(const CheckSpec& spec, std::size_t e);

// OK, or FailedPrecondition("wrong: element 17 of 1024: got 3.5, want 4 (rel err ...)").
core::Status CheckOutput(const CheckSpec& spec, const void* out);

}  // namespace ccltune::worker::host

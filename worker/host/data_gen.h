// Deterministic per-rank input data. Element i of a rank's input is a pure function of a
// seed (rank, problem, generation) and i, so any rank can regenerate any other rank's input
// for the host reference without moving it. Values are never zero: floats lie in
// [0.5, 1.5) (sums and products stay well conditioned for the tolerance check), integers in
// {-5..-1, 1..5} (small, so int8 sums do not wrap; products may, and wrap exactly).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/plan/types.h"

namespace ccltune::worker::host {

struct SeedInput {
  core::Op op = core::Op::kAllReduce;
  core::Dtype dtype = core::Dtype::kFp32;
  core::RedOp redop = core::RedOp::kSum;
  std::uint64_t bytes = 0;
  int rank = 0;
  std::uint64_t generation = 0;  // buffer set or verification run
};
std::uint64_t MakeSeed(const SeedInput& in);

// The value stored at element i (exactly representable in the dtype).
double InputValue(core::Dtype dtype, std::uint64_t seed, std::size_t i);
void FillInput(void* buf, core::Dtype dtype, std::uint64_t seed, std::size_t count);

// Element i of a typed buffer, as double (exact for every dtype here).
double LoadElement(core::Dtype dtype, const void* buf, std::size_t i);

}  // namespace ccltune::worker::host

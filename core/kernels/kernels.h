// Small CUDA kernels the GPU backends need around a collective: deterministic pseudo-random
// input, the expected result computed independently of NCCL, a tolerance check that reports
// the first mismatch, and a bounded spin that stands in for a hung collective in tests.
// Host-callable; every launch is asynchronous on `stream` and returns the launch error.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/plan/types.h"

namespace ccltune::kernels {

// The value rank `rank` holds at element `index` in data generation `generation` is a pure
// function of the three, so any rank can recompute any peer's input (see LaunchExpected).
// Floats lie in [0.5, 1.5), int32 in [1, 100], int8 in [1, 3]: never zero, and sums of a
// node's ranks neither cancel nor overflow.
cudaError_t LaunchRandomFill(void* dst, std::uint64_t count, core::Dtype dtype, int rank,
                             std::uint64_t generation, std::uint64_t first_index,
                             cudaStream_t stream);

// What rank `rank` must hold after `op` over `world` ranks whose inputs came from
// LaunchRandomFill(generation, first_index 0). `count` is ElementCount(op, ...); the output
// has the op's receive size. Reductions run in double in rank order and round once, so the
// result differs from NCCL's only by NCCL's own rounding, which the tolerance covers.
// Broadcast's root is rank 0.
cudaError_t LaunchExpected(void* dst, core::Op op, core::RedOp redop, core::Dtype dtype,
                           std::uint64_t count, int world, int rank, std::uint64_t generation,
                           cudaStream_t stream);

// Receive elements of `op` on one rank for send count `count`.
std::uint64_t RecvElements(core::Op op, std::uint64_t count, int world);
std::uint64_t SendElements(core::Op op, std::uint64_t count, int world);

// First element where |got - want| > rel_tol * |want| (or a NaN), written to `result`,
// which must be host-mapped pinned memory (cudaHostAllocMapped) so the host reads it once
// the stream is done without another copy.
struct Mismatch {
  unsigned long long index;  // ~0ull when every element matched
  double got;
  double want;
};
cudaError_t LaunchCompare(const void* got, const void* want, std::uint64_t count, core::Dtype dtype,
                          double rel_tol, Mismatch* result, cudaStream_t stream);

// Spins one thread until `abort_flag` (host-mapped) becomes non-zero or `max_ns` of
// %globaltimer passed; sets *timed_out (host-mapped) to 1 when the time bound ended it.
// Stands in for a collective that never completes, without ever holding the GPU forever.
cudaError_t LaunchBoundedSpin(const volatile int* abort_flag, std::uint64_t max_ns, int* timed_out,
                              cudaStream_t stream);

}  // namespace ccltune::kernels

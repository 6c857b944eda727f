// Element-wise reduction kernels, one per (dtype, reduce-op), generated from one template.
// out[i] = op(a[i], b[i]); out may alias a or b. Integers wrap on overflow (two's
// complement); fp16/bf16 are computed in fp32 and rounded back (nearest-even) per call.
#pragma once

#include <cstddef>

#include "core/base/status.h"
#include "core/plan/types.h"

namespace ccltune::worker::host {

using ReduceFn = void (*)(void* out, const void* a, const void* b, std::size_t count);

// InvalidArgument for RedOp::kNone. Avg reduces with the sum's kernel; its division is
// DivideInPlace, once the sum is complete.
core::Result<ReduceFn> GetReduceFn(core::Dtype dtype, core::RedOp redop);

// Avg's last step: each of `count` elements divided by `world`, as NCCL's ncclAvg ends:
// integers (the wrapped sum) truncate toward zero; floats divide in fp32 and round back.
void DivideInPlace(core::Dtype dtype, void* buf, std::size_t count, int world);

}  // namespace ccltune::worker::host

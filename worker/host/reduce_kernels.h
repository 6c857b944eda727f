// Element-wise reduction kernels, one per (dtype, reduce-op), generated from one template.
// out[i] = op(a[i], b[i]); out may alias a or b. Integers wrap on overflow (two's
// complement); fp16/bf16 are computed in fp32 and rounded back (nearest-even) per call.
#pragma once

#include <cstddef>

#include "core/base/status.h"
#include "core/plan/types.h"

namespace ccltune::worker::host {

using ReduceFn = void (*)(void* out, const void* a, const void* b, std::size_t count);

// InvalidArgument for RedOp::kNone.
core::Result<ReduceFn> GetReduceFn(core::Dtype dtype, core::RedOp redop);

}  // namespace ccltune::worker::host

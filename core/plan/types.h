// The vocabulary of a tuning problem: collective, element type, reduction. The string
// names are contracts (CRD, Redis keys, metric labels): parse them strictly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"

namespace ccltune::core {

enum class Op { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast };
enum class Dtype { kFp32, kFp16, kBf16, kInt32, kInt8 };
// kAvg is NCCL's ncclAvg: the sum divided by the number of ranks (floats: NCCL multiplies
// each input by 1/n first; integers: the sum, wrapped in the type, divided and truncated).
// FSDP2 reduce-scatters fp32 and bf16 gradients with it.
enum class RedOp { kNone, kSum, kMax, kMin, kProd, kAvg };

const char* OpName(Op op);           // "allReduce"
const char* DtypeName(Dtype dtype);  // "bf16"
const char* RedOpName(RedOp redop);  // "sum", "none" for non-reducing ops

Result<Op> ParseOp(std::string_view s);  // error names the allowed values
Result<Dtype> ParseDtype(std::string_view s);
Result<RedOp> ParseRedOp(std::string_view s);  // "none" is not accepted from users

const std::vector<Op>& AllOps();
const std::vector<Dtype>& AllDtypes();
const std::vector<RedOp>& AllRedOps();  // every reducing op, sum first (never kNone)
std::string AllowedOps();  // "allReduce, allGather, reduceScatter, allToAll, broadcast"
std::string AllowedDtypes();
std::string AllowedRedOps();

// Which of a program's buffers a measured choice runs on, narrowest first (the rule is
// core/apply/any_buffer.h): pooled buffers only (ccltuneMemAlloc); also the program's own
// tensors in CUDA graphs when it registers its memory (direct mode, docs/design.md §5); any
// buffer. The adaptive search judges a choice only against choices that reach as far.
enum class BufferReach { kPooled = 0, kRegistered = 1, kAny = 2 };

std::size_t DtypeSize(Dtype dtype);
bool IsReducing(Op op);  // allReduce, reduceScatter
bool IsFloat(Dtype dtype);

// Relative tolerance of the correctness check (docs/design.md §2.5): fp32 1e-5, fp16/bf16 2e-2,
// integers exact (0). Every backend checks against it.
double VerifyTolerance(Dtype dtype);

// nccl-tests bus bandwidth factor: busbw = algbw * factor.
double BusBwFactor(Op op, int world_size);

// Elements per rank buffer as nccl-tests counts them for a problem of `bytes` (the size
// column): allReduce/broadcast count = bytes/size; allGather/reduceScatter/allToAll use
// the per-rank share, rounded down to a multiple of world_size. 0 means "too small".
std::uint64_t ElementCount(Op op, Dtype dtype, std::uint64_t bytes, int world_size);
// Bytes actually moved (nccl-tests "size") after rounding ElementCount back up.
std::uint64_t EffectiveBytes(Op op, Dtype dtype, std::uint64_t bytes, int world_size);

}  // namespace ccltune::core

// Epilogues of an all-reduce (issue 16, docs/design.md §8): in tensor-parallel inference the
// all-reduce of a layer's output is followed by a residual add and an RMSNorm (or a bias
// add). Two forms are measured against each other:
//  - unfused: any all-reduce, then LaunchEpilogue (one separate kernel, what frameworks
//    run today: vLLM's fused_add_rms_norm);
//  - fused: LaunchFusedAllReduce, our peer kernels doing the add and the norm in the same
//    launch, so the reduced sum never makes a round trip through memory.
// Data is row-major tokens x hidden; a row (one token) is normalised by one thread block.
// fp32 accumulation, fp32/fp16/bf16 data. Every launch is asynchronous on `stream` and
// returns the launch error; nothing here is host-synchronous (graph-capturable).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/kernels/peer_kernels.h"
#include "core/plan/types.h"

namespace ccltune::kernels {

enum class EpilogueOp {
  kBias,             // out = sum + bias[col]
  kResidualRmsNorm,  // residual = sum + residual; out = residual / rms(residual row) * weight
};

// Rows are cut into 16-byte vectors, and a block keeps its row in registers.
inline constexpr int kEpilogueHiddenMultiple = 8;
inline constexpr int kMaxEpilogueHidden = 16384;

struct EpilogueParams {
  EpilogueOp op = EpilogueOp::kResidualRmsNorm;
  int hidden = 0;                // elements per row, a multiple of 8, <= kMaxEpilogueHidden
  float eps = 1e-5f;             // RMSNorm: rsqrt(mean(x^2) + eps)
  const void* weight = nullptr;  // `hidden` elements of the dtype: RMSNorm's gamma, or the bias
};

// The separate epilogue after any all-reduce. `reduced` is the all-reduce's output
// (tokens x hidden). kResidualRmsNorm: residual <- reduced + residual (in place), out <-
// RMSNorm(residual) * weight. kBias: out <- reduced + bias (residual unused, may be null).
// `out` may alias `reduced`.
cudaError_t LaunchEpilogue(const EpilogueParams& p, const void* reduced, void* residual, void* out,
                           std::uint64_t tokens, core::Dtype dtype, cudaStream_t stream);

// Operands of a fused launch, indexed by rank, as mapped here (peer memory, like
// PeerOperands). One-shot touches only our own out and residual; two-shot writes every
// rank's (each rank normalises its share of the rows and sends them to everyone), so there
// every rank's residual must hold the same values, as tensor parallelism keeps them.
struct FusedOperands {
  const void* in[kMaxPeers] = {};  // each rank's partial sums (tokens x hidden)
  void* out[kMaxPeers] = {};       // each rank's normalised (or biased) output
  void* residual[kMaxPeers] = {};  // each rank's residual (kResidualRmsNorm), updated in place
  void* staging[kMaxPeers] = {};   // each rank's staging (mode=ll), FusedStagingBytes each
};

// Staging bytes each rank needs (0 in pull mode).
std::uint64_t FusedStagingBytes(PeerAlgo algo, const PeerShape& shape, std::uint64_t tokens,
                                int hidden, core::Dtype dtype, int world);

// One launch: the sum over ranks of `in` (rank order, fp32, bit-identical on every rank),
// then the epilogue. algo kOneShot (shape.ll false: pull; true: LL push, no barrier) or
// kTwoShot (pull; rows split among ranks). Float dtypes only, world 2..kMaxPeers,
// shape.blocks rows in flight (a block per row, rows strided over the grid). Returns
// cudaErrorInvalidValue for what it does not implement (push two-shot, a bad hidden).
cudaError_t LaunchFusedAllReduce(PeerAlgo algo, const PeerTeam& team, const FusedOperands& ops,
                                 std::uint64_t tokens, const EpilogueParams& p, core::Dtype dtype,
                                 const PeerShape& shape, cudaStream_t stream);

// Fill ranks of the epilogue's own operands for LaunchRandomFill: the residual and the
// weight (or bias) are the same on every rank, so they are filled as these pseudo-ranks.
inline constexpr int kResidualFillRank = 1 << 20;
inline constexpr int kWeightFillRank = (1 << 20) + 1;

// The independent reference: what out and residual must hold after one all-reduce +
// epilogue over `world` ranks whose inputs came from LaunchRandomFill(rank r, generation),
// the residual from LaunchRandomFill(kResidualFillRank, generation) and the weight (hidden
// elements) from LaunchRandomFill(kWeightFillRank, generation). One thread per row, double
// arithmetic from the rounded inputs, rounded once. residual_want unused for kBias.
cudaError_t LaunchEpilogueExpected(const EpilogueParams& p, void* out_want, void* residual_want,
                                   std::uint64_t tokens, int world, std::uint64_t generation,
                                   core::Dtype dtype, cudaStream_t stream);

}  // namespace ccltune::kernels

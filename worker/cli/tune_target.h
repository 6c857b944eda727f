// Which backend and how many ranks `ccltune tune` runs (docs/design.md §9): a flag first, then
// what a CollectiveTuningJob given as --plan says (spec.backend, spec.worldSize), then this
// machine (auto: nccl where GPUs and NCCL are, else host; one rank per GPU, or 4 host ranks).
// What this machine cannot run is refused before any rank starts, in one line naming the
// field or flag it came from and what is allowed: a job for GPUs on a machine without one
// must not quietly become a host run of the same sizes.
#pragma once

#include <string>

#include "core/base/status.h"
#include "core/plan/plan.h"

namespace ccltune::worker::cli {

// Rank processes one `ccltune tune` starts at most (--ranks, spec.worldSize).
inline constexpr int kMaxLocalRanks = 1024;

struct TuneAsked {
  std::string backend_flag = "auto";  // --backend: auto | nccl | host
  int ranks_flag = 0;                 // --ranks; 0 = not given
  bool cuda_graph_flag = false;       // --cuda-graph
  std::string plan_file;              // --plan, for messages
};

// The backend: --backend, else the plan file's spec.backend, else auto. `why_host` says why
// auto took host ("built without CUDA/NCCL", ...). An nccl backend needs a visible GPU.
core::Result<std::string> ResolveBackend(const TuneAsked& asked, const core::JobTarget& job,
                                         std::string* why_host);

// The rank count: --ranks, else spec.worldSize, else one per GPU (nccl) or 4 (host); on nccl
// at most the visible GPUs.
core::Result<int> ResolveRanks(const TuneAsked& asked, const core::JobTarget& job,
                               const std::string& backend);

// CUDA graphs (--cuda-graph, benchmark.cudaGraph) time NCCL's calls on GPUs: the host backend
// has none to time, so a plan asking for them is refused there rather than run without.
core::Status CheckCudaGraph(const TuneAsked& asked, const core::Plan& plan,
                            const std::string& backend, const std::string& why_host);

}  // namespace ccltune::worker::cli

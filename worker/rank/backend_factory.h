// Creates the backend a rank was asked for; the only place that knows every backend.
#pragma once

#include <memory>
#include <string>

#include "core/plan/plan.h"
#include "worker/rank/backend.h"
#include "worker/rendezvous/peer_directory.h"

namespace ccltune::worker {

struct BackendParams {
  std::string name;  // "host" | "nccl"
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string listen_host = "127.0.0.1";
};

core::Result<std::unique_ptr<Backend>> CreateBackend(const BackendParams& params,
                                                     PeerDirectory& directory,
                                                     const CancelToken& cancel,
                                                     const core::BenchmarkSpec& bench,
                                                     Deadline deadline);

// "nccl" when this build has the NCCL backend and a GPU is visible, else "host". `why`
// says why nccl was not picked.
std::string AutoBackend(std::string* why);
// GPUs visible to this process (0 without CUDA or GPU).
int VisibleGpuCount();

}  // namespace ccltune::worker

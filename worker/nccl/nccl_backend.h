// The `nccl` communicator backend (docs/design.md §2, §5): one process per GPU, a non-blocking
// NCCL communicator whose ncclUniqueId travels through the PeerDirectory, every NCCL choice
// of the catalog, abort-and-rebuild recovery. Built only with CUDA; the `ccltune` binary
// creates it through CreateNcclBackend.
#pragma once

#include <memory>
#include <string>

#include "core/base/status.h"
#include "core/plan/plan.h"
#include "worker/deadline.h"
#include "worker/rank/backend.h"
#include "worker/rendezvous/peer_directory.h"

namespace ccltune::worker {

// Blocks until the default communicator is up (bounded by bench.rendezvous_timeout_seconds
// and `cancel`). Uses GPU `local_rank` of the visible ones (CUDA_VISIBLE_DEVICES applies).
// `dir` and `cancel` must outlive the backend; the backend must outlive its choices.
// Points NCCL_TUNER_PLUGIN at libccltune-inproc-tuner.so (next to the executable or
// $CCLTUNE_INPROC_TUNER) so `nccl:algo=...,proto=...` can be forced per call.
core::Result<std::unique_ptr<Backend>> CreateNcclBackend(int rank, int world, int local_rank,
                                                         PeerDirectory& dir,
                                                         const CancelToken& cancel,
                                                         const core::BenchmarkSpec& bench);

// True when at least one GPU is usable; else false and `why` (if given) says why
// ("no CUDA driver", "0 GPUs visible"). Does not touch NCCL.
bool NcclAvailable(std::string* why);

}  // namespace ccltune::worker

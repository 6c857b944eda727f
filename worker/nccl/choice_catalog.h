// The NCCL backend's catalog: every choice it measures for an op, and why a choice is
// skipped for a problem on this system. Names are read by core/apply/choice_spec.h.
#pragma once

#include <string>
#include <vector>

#include "core/apply/choice_spec.h"
#include "core/apply/node_span.h"
#include "core/plan/choice.h"
#include "core/plan/problem.h"
#include "worker/rank/backend.h"

namespace ccltune::worker::nccl {

using apply::BufferMode;
using apply::ChoiceSpec;
using apply::Composition;
using apply::kCtasValues;
using apply::kLLMaxBytes;
using apply::kOneShotMaxBytes;
using apply::PeerKind;
using apply::SpecFromChoice;

// What the catalog needs to know about the running system.
struct CatalogContext {
  int world = 1;
  int nccl_version = 0;                                 // ncclGetVersion code, e.g. 22803
  bool tuner_loaded = false;                            // the in-process tuner is NCCL's plugin
  std::string tuner_problem;                            // why not, when not
  bool test_choices = false;                            // CCLTUNE_ENABLE_TEST_CHOICES=1
  std::string peer_problem = "peer memory not probed";  // empty: peer kernels can run
  apply::NodeSpan span;  // how the ranks spread over nodes (their node names)
  // Empty: every node's ranks share peer memory, so `hier` can run (issue 33).
  std::string node_peer_problem = "node teams not set up";
  std::string ib_problem = "not probed";  // empty: an IB/RoCE device NCCL can use is here
};

// Empty when this machine has a device NCCL's IB transport can use (what its ibverbs lists:
// /sys/class/infiniband) and NCCL_IB_DISABLE is not 1; else why not.
std::string NetIbProblem();

// Every catalog choice for `op`, the default first; with `epilogue` (an allReduce followed
// by one) also the fused kernels, and every other choice then means "this collective, then
// the separate epilogue kernel"; over several nodes also the hierarchical all-reduce.
std::vector<core::ChoiceName> CatalogChoices(core::Op op, const CatalogContext& ctx,
                                             bool epilogue = false);
// Empty when `choice` can run for `problem` here; else the reason it is skipped.
std::string SkipReason(const core::ChoiceName& choice, const core::Problem& problem,
                       const CatalogContext& ctx);
// Backend::Candidates: the requested choices (or the catalog), default first, each with
// its skip reason.
std::vector<ChoiceCandidate> BuildCandidates(const core::Problem& problem,
                                             const CatalogContext& ctx);

}  // namespace ccltune::worker::nccl

// Whether a communicator's init builds the hierarchical all-reduce's node team (issue 33),
// from what every rank knows alike once the nodes are counted: each rank's node as NCCL
// groups it (core::NcclHostKey) and whether peer memory is allowed. Init builds the team
// only when this plan allows it and the agreed table applies `hier` at some size. Pure C++
// (no CUDA): init.cc decides with it, CI tests it.
#pragma once

#include <string>
#include <vector>

#include "core/apply/node_span.h"
#include "core/node/node_name.h"

namespace ccltune::runtime {

struct NodeTeamPlan {
  apply::NodeSpan span;   // the ranks over nodes: the table's rules read it too
  core::RankPlace place;  // this rank's node, its local rank and its node's ranks
  std::string why_not;    // empty: the team can be built
};

// `node_of_rank`: every rank's node key, by rank; `peer_memory`: RuntimeConfig::peer_memory.
NodeTeamPlan PlanNodeTeam(const std::vector<std::string>& node_of_rank, int rank, bool peer_memory);

}  // namespace ccltune::runtime

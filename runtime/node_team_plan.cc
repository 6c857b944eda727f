// The node team's plan (node_team_plan.h).
#include "runtime/node_team_plan.h"

namespace ccltune::runtime {

NodeTeamPlan PlanNodeTeam(const std::vector<std::string>& node_of_rank, int rank,
                          bool peer_memory) {
  NodeTeamPlan plan;
  const core::NodeShape shape = core::ShapeOfNodes(node_of_rank);
  plan.span = {shape.nodes, shape.gpus_per_node, shape.equal_groups};
  plan.place = core::PlaceOfRank(node_of_rank, rank);
  plan.why_not = apply::HierSpanSkipReason(plan.span);
  if (plan.why_not.empty() && !peer_memory) {
    plan.why_not = "peer memory turned off (ccltuneConfig_t.peerMemory, CCLTUNE_PEER_MEMORY=0)";
  }
  return plan;
}

}  // namespace ccltune::runtime

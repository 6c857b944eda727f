// SetUpRankNode (rank_node.h).
#include "worker/rank/rank_node.h"

#include <cstdlib>

#include "core/log.h"
#include "core/node_name.h"

namespace ccltune::worker {

core::Result<std::string> SetUpRankNode(const RankNodeParams& p) {
  if (!p.node_name.empty()) {
    CCLTUNE_RETURN_IF_ERROR(core::CheckNodeName(p.node_name, "--node-name"));
    setenv(core::kNodeNameEnv, p.node_name.c_str(), /*overwrite=*/1);
  }
  CCLTUNE_ASSIGN_OR_RETURN(const core::NodeName base, core::LocalNodeName());
  CCLTUNE_RETURN_IF_ERROR(core::CheckEmulatedNodes(p.emulated_nodes, p.world, "emulatedNodes"));
  std::string node = base.name;
  if (p.emulated_nodes > 0) {
    node = core::EmulatedNodeName(base.name, p.rank, p.world, p.emulated_nodes);
    CCLTUNE_RETURN_IF_ERROR(core::CheckNodeName(node, "emulated node name"));
  }
  // Both, overwriting: an emulated node replaces the base name in NCCL's eyes as well.
  setenv(core::kNodeNameEnv, node.c_str(), /*overwrite=*/1);
  setenv(core::kNcclHostIdEnv, node.c_str(), /*overwrite=*/1);
  core::LogInfo("node " + node + " (from " + base.source +
                (p.emulated_nodes > 0 ? ", emulated node of " + std::to_string(p.emulated_nodes)
                                      : std::string()) +
                ")");
  return node;
}

}  // namespace ccltune::worker

// SetUpRankNode (rank_node.h).
#include "worker/rank/rank_node.h"

#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "core/base/log.h"
#include "core/node/node_name.h"

namespace ccltune::worker {
namespace {

// An emulated node's own host name, where this process may have one (issue 33): a UTS
// namespace of its own (CAP_SYS_ADMIN, e.g. root on the GPU machines) named after the node,
// as a rank on a real node would see. NCCL and ccltune group ranks by NCCL_HOSTID and the
// node name, set above, so without it nothing changes but `hostname` in the rank's logs.
// The calling thread's namespace: threads made later (NCCL's among them) inherit it.
std::string OwnHostName(const std::string& node) {
  if (node.size() > HOST_NAME_MAX) return "no own host name (longer than HOST_NAME_MAX)";
  if (::unshare(CLONE_NEWUTS) != 0) {
    return std::string("no own host name (unshare(CLONE_NEWUTS): ") + std::strerror(errno) +
           "; needs CAP_SYS_ADMIN)";
  }
  if (::sethostname(node.data(), node.size()) != 0) {
    return std::string("no own host name (sethostname: ") + std::strerror(errno) + ")";
  }
  return "own host name " + node;
}

}  // namespace

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
  std::string how = "from " + base.source;
  if (p.emulated_nodes > 0) {  // the host name is set here, whatever the log level
    how += ", emulated node of " + std::to_string(p.emulated_nodes) + "; " + OwnHostName(node);
  }
  // Every rank, every job: a debug line (`ccltune tune -v`, CCLTUNE_LOG_LEVEL=debug), not noise.
  core::LogDebug("node " + node + " (" + how + ")");
  return node;
}

}  // namespace ccltune::worker

// A rank's node (docs/design.md §6): the name ranks group by, for the fingerprint's `nodes` and
// `gpusPerNode`, for peer memory (only inside one node) and for NCCL, which groups ranks by
// NCCL_HOSTID when it is set. Inside a pod the host name is the pod's name, so a pod learns
// its node from spec.nodeName through the downward API (CCLTUNE_NODE_NAME); outside
// Kubernetes the host name is the node's. `ccltune tune --emulate-nodes N` splits one
// machine's ranks into N named nodes (EmulatedNodeName). No CUDA, no NCCL: the worker, the
// plugin and the runtime share this one rule.
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"

namespace ccltune::core {

inline constexpr const char* kNodeNameEnv = "CCLTUNE_NODE_NAME";
inline constexpr const char* kNcclHostIdEnv = "NCCL_HOSTID";

struct NodeName {
  std::string name;
  std::string source;  // where it came from, for messages: "CCLTUNE_NODE_NAME", "host name", …
};

// 1-253 printable ASCII characters without spaces (it goes into Redis JSON, NCCL_HOSTID and
// NodeIdentity's space-separated text); InvalidArgument naming `field` otherwise.
Status CheckNodeName(const std::string& name, const std::string& field);

// This process's node: CCLTUNE_NODE_NAME, else NCCL_HOSTID (what NCCL groups ranks by), else
// the host name. InvalidArgument when the variables disagree (NCCL and ccltune would see
// different nodes) or one is not a node name.
Result<NodeName> LocalNodeName();

// The emulated node of `rank` when `world` ranks are split into `nodes` groups of consecutive
// ranks: "<base>-node<k>", k = rank / (world / nodes). `nodes` must divide `world`.
std::string EmulatedNodeName(const std::string& base, int rank, int world, int nodes);

// `nodes` (0 = off) against the world size: 0, or 1..world dividing world. InvalidArgument
// naming `field` and the world size otherwise.
Status CheckEmulatedNodes(int nodes, int world, const std::string& field);

// How ranks spread over nodes, from each rank's node name (index = rank).
struct NodeShape {
  int nodes = 0;
  int gpus_per_node = 0;     // GpusPerNode(ranks, nodes): the fingerprint's field
  bool equal_groups = true;  // every node holds the same number of ranks
};
NodeShape ShapeOfNodes(const std::vector<std::string>& node_of_rank);

// Where one rank sits among the nodes (the hierarchical all-reduce's teams): its node's index
// (nodes numbered by their lowest rank), its index among its node's ranks (the local rank),
// and its node's ranks in rank order.
struct RankPlace {
  int node = 0;
  int local_rank = 0;
  std::vector<int> node_ranks;
};
RankPlace PlaceOfRank(const std::vector<std::string>& node_of_rank, int rank);

// The fingerprint's gpusPerNode for `ranks` over `nodes` (NCCL gives the plugin only these
// two numbers, so everyone uses this rule): ranks / nodes, at least 1.
int GpusPerNode(int ranks, int nodes);

// "<boot id> <node name>": the kernel's boot id (containers of one machine share it, and CUDA
// IPC needs it) and LocalNodeName (falling back to the host name when that is invalid).
// Ranks are on one node when both match; NCCL's node count matches the distinct names.
// This machine's kernel boot id ("unknown-boot-id" when unreadable): containers of one node
// share it, so it tells ranks of one kernel apart from ranks elsewhere.
std::string BootId();
std::string NodeIdentity();
std::string NodeOfIdentity(const std::string& identity);  // the name part
std::string BootOfIdentity(const std::string& identity);  // the boot id part

// What NCCL 2.28 groups this rank's node by (src/misc/utils.cc getHostHashOnce, hashed once
// per process at its first communicator's init): NCCL_HOSTID when set, else the host name
// followed by the kernel boot id. NCCL's nNodes is the number of distinct keys, so the
// runtime counts nodes by this key (it cannot ask NCCL); the worker sets NCCL_HOSTID to its
// node name, so its count of names is the same number.
std::string NcclHostKey();

// What ExportNodeNameToNccl did, for the libraries' messages.
struct NodeExport {
  enum class What { kSet, kAlreadySet, kNoNodeName, kConflict, kInvalid };
  What what = What::kNoNodeName;
  std::string text;  // one line: what NCCL will group this rank by, and why
};

// Before NCCL's first communicator in this process: CCLTUNE_NODE_NAME (a pod's
// spec.nodeName) becomes NCCL_HOSTID when NCCL_HOSTID is unset, so pods of one node (with
// hostIPC) share NCCL's host hash and talk P2P/NVLink, as the worker's ranks do. Never
// overwrites NCCL_HOSTID (a conflicting one is reported: NCCL keeps grouping by it). Calls
// setenv: only while no other thread reads the environment (a library constructor, or
// before NCCL's first init).
NodeExport ExportNodeNameToNccl();

}  // namespace ccltune::core

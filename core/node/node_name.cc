// The node rule (node_name.h).
#include "core/node/node_name.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <map>

namespace ccltune::core {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

std::string HostName() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "unknown-host";
  return name.data();
}

}  // namespace

Status CheckNodeName(const std::string& name, const std::string& field) {
  const bool printable = std::all_of(name.begin(), name.end(), [](char c) {
    return c > ' ' && c < 0x7f;  // no spaces, no control or non-ASCII bytes
  });
  if (!name.empty() && name.size() <= 253 && printable) return Status::Ok();
  return InvalidArgument(field + "='" + name +
                         "' is not a node name (1-253 printable ASCII characters, no spaces)");
}

Result<NodeName> LocalNodeName() {
  const std::string node = Env(kNodeNameEnv);
  const std::string hostid = Env(kNcclHostIdEnv);
  if (!node.empty()) {
    CCLTUNE_RETURN_IF_ERROR(CheckNodeName(node, kNodeNameEnv));
    // NCCL would group this rank by NCCL_HOSTID and ccltune by the node name: two answers.
    if (!hostid.empty() && hostid != node) {
      return InvalidArgument(
          std::string(kNcclHostIdEnv) + "='" + hostid + "' differs from " + kNodeNameEnv + "='" +
          node + "': NCCL and ccltune would see different nodes; unset " + kNcclHostIdEnv +
          " (ccltune sets it from the node name) or make "
          "them equal");
    }
    return NodeName{node, kNodeNameEnv};
  }
  if (!hostid.empty()) {
    CCLTUNE_RETURN_IF_ERROR(CheckNodeName(hostid, kNcclHostIdEnv));
    return NodeName{hostid, kNcclHostIdEnv};
  }
  const std::string host = HostName();
  CCLTUNE_RETURN_IF_ERROR(CheckNodeName(host, "host name"));
  return NodeName{host, "host name"};
}

std::string EmulatedNodeName(const std::string& base, int rank, int world, int nodes) {
  const int per_node = std::max(1, world / std::max(1, nodes));
  return base + "-node" + std::to_string(rank / per_node);
}

Status CheckEmulatedNodes(int nodes, int world, const std::string& field) {
  if (nodes == 0) return Status::Ok();
  if (nodes >= 1 && nodes <= world && world % nodes == 0) return Status::Ok();
  return InvalidArgument(field + ": " + std::to_string(nodes) + " emulated nodes do not split " +
                         std::to_string(world) +
                         " ranks evenly (allowed: 0 = off, or a divisor of the rank count, " +
                         "1.." + std::to_string(world) + ")");
}

int GpusPerNode(int ranks, int nodes) { return std::max(1, ranks / std::max(1, nodes)); }

NodeShape ShapeOfNodes(const std::vector<std::string>& node_of_rank) {
  std::map<std::string, int> per_node;
  for (const std::string& n : node_of_rank) ++per_node[n];
  NodeShape shape;
  shape.nodes = static_cast<int>(per_node.size());
  shape.gpus_per_node = GpusPerNode(static_cast<int>(node_of_rank.size()), shape.nodes);
  for (const auto& [name, n] : per_node) shape.equal_groups &= n == per_node.begin()->second;
  return shape;
}

RankPlace PlaceOfRank(const std::vector<std::string>& node_of_rank, int rank) {
  RankPlace place;
  std::vector<std::string> seen;  // node names by first appearance
  for (int r = 0; r < static_cast<int>(node_of_rank.size()); ++r) {
    const std::string& name = node_of_rank[r];
    if (std::find(seen.begin(), seen.end(), name) == seen.end()) seen.push_back(name);
    if (r == rank) {  // its node's index, not the last one seen (ranks may interleave)
      place.node = static_cast<int>(std::find(seen.begin(), seen.end(), name) - seen.begin());
      place.local_rank = static_cast<int>(place.node_ranks.size());
    }
    if (name == node_of_rank[rank]) place.node_ranks.push_back(r);
  }
  return place;
}

std::string BootId() {
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  return boot.empty() ? std::string("unknown-boot-id") : boot;
}

std::string NodeIdentity() {
  Result<NodeName> node = LocalNodeName();
  return BootId() + " " + (node.ok() ? node->name : HostName());
}

std::string BootOfIdentity(const std::string& identity) {
  return identity.substr(0, identity.find(' '));
}

std::string NodeOfIdentity(const std::string& identity) {
  const auto space = identity.find(' ');
  return space == std::string::npos ? std::string() : identity.substr(space + 1);
}

std::string NcclHostKey() {
  const std::string hostid = Env(kNcclHostIdEnv);
  if (!hostid.empty()) return hostid;
  return HostName() + BootId();  // NCCL appends the boot id to the host name, no separator
}

NodeExport ExportNodeNameToNccl() {
  const std::string node = Env(kNodeNameEnv);
  const std::string hostid = Env(kNcclHostIdEnv);
  using What = NodeExport::What;
  if (node.empty()) {
    return {What::kNoNodeName,
            hostid.empty()
                ? "NCCL groups ranks by host name + boot id (no " + std::string(kNodeNameEnv) + ")"
                : "NCCL groups ranks by NCCL_HOSTID='" + hostid + "' (no " + kNodeNameEnv + ")"};
  }
  if (Status st = CheckNodeName(node, kNodeNameEnv); !st.ok()) {
    return {What::kInvalid,
            st.message() + ": NCCL_HOSTID left " + (hostid.empty() ? "unset" : "'" + hostid + "'")};
  }
  if (hostid == node) return {What::kAlreadySet, "NCCL groups ranks by NCCL_HOSTID='" + node + "'"};
  if (!hostid.empty()) {
    return {What::kConflict, std::string(kNcclHostIdEnv) + "='" + hostid + "' differs from " +
                                 kNodeNameEnv + "='" + node + "': NCCL groups ranks by " +
                                 kNcclHostIdEnv + " (left as it is)"};
  }
  setenv(kNcclHostIdEnv, node.c_str(), /*overwrite=*/0);
  return {What::kSet, "NCCL_HOSTID='" + node + "' set from " + kNodeNameEnv};
}

}  // namespace ccltune::core

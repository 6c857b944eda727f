// The node this rank runs on (docs/design.md §6), settled before the rank joins: its pod's
// spec.nodeName (CCLTUNE_NODE_NAME through the downward API, or --node-name), else what
// core::LocalNodeName finds; with emulated nodes the rank's group name instead. The answer is
// exported into this process's environment as CCLTUNE_NODE_NAME and NCCL_HOSTID, so the peer
// memory probe, the rank record and every NCCL communicator this process creates agree on it
// (NCCL 2.28 hashes NCCL_HOSTID, once per process, at its first communicator's init:
// src/misc/utils.cc getHostHash).
#pragma once

#include <string>

#include "core/base/status.h"

namespace ccltune::worker {

struct RankNodeParams {
  std::string node_name;   // --node-name; empty: core::LocalNodeName()
  int emulated_nodes = 0;  // plan's emulatedNodes (0 = off); divides world (checked here too)
  int rank = 0;
  int world = 1;
};

// InvalidArgument for a bad or contradictory node name, or emulated nodes that do not divide
// the world. Call before anything creates an NCCL communicator.
core::Result<std::string> SetUpRankNode(const RankNodeParams& params);

}  // namespace ccltune::worker

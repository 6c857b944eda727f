// What libccltune-nccl puts in the process's environment before the real NCCL's first
// communicator init. NCCL 2.28 reads some settings once per process, there:
//   NCCL_HOSTID (src/misc/utils.cc getHostHash, a call_once at the first init's fillInfo):
//     from CCLTUNE_NODE_NAME (a pod's spec.nodeName) when unset, so pods of one node share
//     NCCL's host hash and talk P2P/NVLink instead of NET (core::ExportNodeNameToNccl);
//   an `nccl-net` winner's settings (NCCL_PARAM caches: NCCL_SOCKET_NTHREADS,
//     NCCL_NSOCKS_PERTHREAD at the first network connection, NCCL_BUFFSIZE at the first
//     init's computeBuffSizes): one setting per process (apply::PickProcessNetSettings).
// The node count a communicator will have is NCCL's to find during that init, so the
// setting is looked up for every count that could be (the divisors of its ranks above 1)
// and applied only when exactly one has an nccl-net winner; the context made later checks
// the count it really got (FirstInitMismatch). A value the environment already holds is
// never overwritten, and then no variable of the setting is set. Nothing here when the shim is off
// (CCLTUNE_NCCL=off, another NCCL).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/node/node_name.h"
#include "runtime/runtime_config.h"

namespace ccltune::shim {

// The nccl-net setting a communicator of `world` ranks over `nodes` (0: not yet known) would
// take from `cfg`'s winners. Bounded by the winners' load timeout; never throws.
struct NetPlan {
  std::vector<std::pair<std::string, std::string>> env;  // empty: nothing to set
  std::string winner;
  int nodes = 0;              // the node count whose fingerprint held it (0: a pinned fingerprint)
  std::string text;           // one line: what it is and why, or why nothing
  bool switched_off = false;  // CCLTUNE_NCCL_NET_SETTINGS is not on (text says why)
  // Nothing set though the winners call for a setting (several node counts have one, or the
  // environment holds its variables): the first init says so as it says what it set.
  bool withheld = false;
};
// What this process sets: WinnersNetPlan's setting, whole, or nothing when
// CCLTUNE_NCCL_NET_SETTINGS=off (one setting serves every size and may lose where it did
// not win) or the environment already holds one of its variables (the user's values stay,
// and half a setting was never measured).
NetPlan PlanNetSettings(const runtime::RuntimeConfig& cfg, int world, int nodes, int nccl_version);
// The setting `cfg`'s winners call for, whatever the environment holds.
NetPlan WinnersNetPlan(const runtime::RuntimeConfig& cfg, int world, int nodes, int nccl_version);

// core::ExportNodeNameToNccl, once per process (later calls return the first's outcome).
const core::NodeExport& ExportNodeOnce();

// Once per process, at the first communicator init the shim sees (`world` ranks, this one
// `rank`), before forwarding it. One line on stderr (rank 0, or any rank for a conflict).
void BeforeFirstInit(int world, int rank);

// "" when the nccl-net settings set at the first init were tuned for `nodes` nodes (or none
// were set); else a clause saying for how many they were.
std::string FirstInitMismatch(int nodes);

}  // namespace ccltune::shim

// The choice rules that depend on how the ranks spread over nodes (issue 33, docs/design.md §5:
// "peer-memory choices only inside one node"), and the environment of a `nccl-net` setting's
// rank processes and the one setting a process of the application takes. Pure C++: the worker's
// catalog, the runtime and their tests without a GPU read them the same way.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/apply/choice_spec.h"
#include "core/apply/record_parser.h"

namespace ccltune::apply {

// The environment a rank process of `net` is started with, in a fixed order.
std::vector<std::pair<std::string, std::string>> NetSettingsEnv(const NetSettings& net);
// Every variable NetSettingsEnv may name.
inline constexpr const char* kNetSettingsVars[] = {"NCCL_SOCKET_NTHREADS", "NCCL_NSOCKS_PERTHREAD",
                                                   "NCCL_BUFFSIZE", "NCCL_IB_QPS_PER_CONNECTION"};
// The kNetSettingsVars this process's environment holds now (set and non-empty), by name.
std::map<std::string, std::string> NetSettingsInEnvironment();

// The one `nccl-net` setting a process of `world` ranks takes from a fingerprint's records
// (NCCL reads them once per process, so one setting serves every size): the setting that
// won the most problems, ties to the one that won the largest message. Empty env when no
// record of `world` ranks has an nccl-net winner.
struct ProcessNetPick {
  std::vector<std::pair<std::string, std::string>> env;
  std::string winner;  // the choice name as published (the first record's spelling)
  int wins = 0;        // problems it won
  int other_wins = 0;  // problems other nccl-net settings won (not applied)
  int records = 0;     // records of `world` ranks looked at
};
ProcessNetPick PickProcessNetSettings(const std::vector<WinnerRecord>& records, int world);

// How the ranks spread over nodes (core::ShapeOfNodes), as the choice rules need it.
struct NodeSpan {
  int nodes = 1;
  int ranks_per_node = 1;
  bool equal_groups = true;
};

// Why no hierarchical all-reduce can run over `span`, whatever the problem (empty: it can):
// several nodes of equal rank counts, 2 to kMaxPeersParam ranks each. The runtime decides
// with it whether to build the node teams at all.
std::string HierSpanSkipReason(const NodeSpan& span);

// Why `s` cannot run `problem` over `span` (empty: it can): peer memory only inside one node;
// network settings only across nodes; the hierarchical all-reduce only for allReduce over
// several nodes of equal rank counts, more than one rank each, a count its ranks per node
// divide, and what our reducing kernels take.
std::string NodeSpanSkipReason(const ChoiceSpec& s, const core::Problem& problem,
                               const NodeSpan& span);

}  // namespace ccltune::apply

// The choice rules that depend on how the ranks spread over nodes (issue 33, DESIGN §5:
// "peer-memory choices only inside one node"), and the environment of a `nccl-net` setting's
// rank processes. Pure C++: the worker's catalog, the runtime and their tests without a GPU
// read them the same way.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/apply/choice_spec.h"

namespace ccltune::apply {

// The environment a rank process of `net` is started with, in a fixed order.
std::vector<std::pair<std::string, std::string>> NetSettingsEnv(const NetSettings& net);

// How the ranks spread over nodes (core::ShapeOfNodes), as the choice rules need it.
struct NodeSpan {
  int nodes = 1;
  int ranks_per_node = 1;
  bool equal_groups = true;
};

// Why `s` cannot run `problem` over `span` (empty: it can): peer memory only inside one node;
// network settings only across nodes; the hierarchical all-reduce only for allReduce over
// several nodes of equal rank counts, more than one rank each, a count its ranks per node
// divide, and what our reducing kernels take.
std::string NodeSpanSkipReason(const ChoiceSpec& s, const core::Problem& problem,
                               const NodeSpan& span);

}  // namespace ccltune::apply

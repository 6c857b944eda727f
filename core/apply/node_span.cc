// Choice rules across nodes and nccl-net's environment (node_span.h).
#include "core/apply/node_span.h"

#include <cstdlib>
#include <map>

namespace ccltune::apply {
namespace {

std::string HierSkipReason(const ChoiceSpec& s, const core::Problem& problem,
                           const NodeSpan& span) {
  if (problem.op != core::Op::kAllReduce) return "the hierarchical path is an allReduce";
  if (std::string why = HierSpanSkipReason(span); !why.empty()) return why;
  const int world = span.nodes * span.ranks_per_node;
  const std::uint64_t count = core::ElementCount(problem.op, problem.dtype, problem.bytes, world);
  if (count % static_cast<std::uint64_t>(span.ranks_per_node) != 0) {
    return "element count " + std::to_string(count) + " not divisible by " +
           std::to_string(span.ranks_per_node) + " ranks per node";
  }
  if (std::string why = OwnReductionSkipReason(problem); !why.empty()) return why;
  // The node phases are our reduce-scatter and all-gather kernels over the node's ranks.
  if (s.threads < span.ranks_per_node) return "threads must be at least the ranks per node";
  if (s.threads > kMaxReduceThreadsParam) {
    return "reducing kernels run at most 512 threads per block (registers)";
  }
  return "";
}

}  // namespace

std::map<std::string, std::string> NetSettingsInEnvironment() {
  std::map<std::string, std::string> held;
  for (const char* name : kNetSettingsVars) {
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') held[name] = v;
  }
  return held;
}

std::string HierSpanSkipReason(const NodeSpan& span) {
  if (span.nodes < 2) return "one node: the hierarchical path needs ranks on several nodes";
  if (!span.equal_groups) {
    return "unequal ranks per node: the shards of the intra-node reduce-scatter must line up "
           "across nodes";
  }
  if (span.ranks_per_node < 2) {
    return "one rank per node: no intra-node phase (it would be NCCL's allReduce)";
  }
  if (span.ranks_per_node > kMaxPeersParam) {
    return std::to_string(span.ranks_per_node) +
           " ranks per node: the node phases' kernels join 2 to " + std::to_string(kMaxPeersParam) +
           " ranks";
  }
  return "";
}

std::vector<std::pair<std::string, std::string>> NetSettingsEnv(const NetSettings& net) {
  std::vector<std::pair<std::string, std::string>> env;
  if (net.socket_threads > 0)
    env.emplace_back("NCCL_SOCKET_NTHREADS", std::to_string(net.socket_threads));
  if (net.socks_per_thread > 0)
    env.emplace_back("NCCL_NSOCKS_PERTHREAD", std::to_string(net.socks_per_thread));
  if (net.buff_size > 0) env.emplace_back("NCCL_BUFFSIZE", std::to_string(net.buff_size));
  if (net.ib_qps > 0) env.emplace_back("NCCL_IB_QPS_PER_CONNECTION", std::to_string(net.ib_qps));
  return env;
}

ProcessNetPick PickProcessNetSettings(const std::vector<WinnerRecord>& records, int world) {
  struct Tally {
    std::string winner;
    int wins = 0;
    std::uint64_t largest = 0;
  };
  std::map<std::vector<std::pair<std::string, std::string>>, Tally> by_env;
  ProcessNetPick pick;
  for (const WinnerRecord& r : records) {
    if (r.world_size != world) continue;
    ++pick.records;
    core::Result<core::ChoiceName> name = core::ParseChoice(r.winner, "nccl");
    if (!name.ok() || name->base != "nccl-net") continue;
    core::Result<ChoiceSpec> spec = SpecFromChoice(*name);
    if (!spec.ok()) continue;  // the loader's rules keep it out of the table too
    Tally& t = by_env[NetSettingsEnv(spec->net)];
    if (t.winner.empty()) t.winner = r.winner;
    ++t.wins;
    t.largest = std::max(t.largest, r.bytes);
  }
  const Tally* best = nullptr;
  int total = 0;
  for (const auto& [env, t] : by_env) {
    total += t.wins;
    if (best == nullptr || t.wins > best->wins ||
        (t.wins == best->wins && t.largest > best->largest)) {
      best = &t;
      pick.env = env;
    }
  }
  if (best == nullptr) return pick;
  pick.winner = best->winner;
  pick.wins = best->wins;
  pick.other_wins = total - best->wins;
  return pick;
}

std::string NodeSpanSkipReason(const ChoiceSpec& s, const core::Problem& problem,
                               const NodeSpan& span) {
  if (s.compose == Composition::kPeer && span.nodes > 1) {
    return "peer memory (CUDA IPC) joins the ranks of one node; these span " +
           std::to_string(span.nodes) + " nodes";
  }
  if (s.net.any() && span.nodes < 2) {
    return "network transport settings matter only across nodes (all ranks on one node)";
  }
  if (s.compose == Composition::kHierarchical) return HierSkipReason(s, problem, span);
  return "";
}

}  // namespace ccltune::apply

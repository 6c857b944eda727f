// libccltune-nccl's settings before NCCL's first init (first_init.h).
#include "runtime/nccl_shim/first_init.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/apply/node_span.h"
#include "core/apply/winner_loader.h"
#include "core/gpu/fingerprint_probe.h"
#include "runtime/nccl_shim/real_nccl.h"
#include "runtime/nccl_shim/serve.h"
#include "runtime/nccl_shim/shim_log.h"

namespace ccltune::shim {
namespace {

std::mutex g_mu;
int g_net_nodes = -1;  // the nodes of the settings set at the first init; -1: none set

struct Found {
  int nodes = 0;
  std::string fingerprint;
  apply::ProcessNetPick pick;
};

// The node counts a communicator of `world` ranks could span where network settings matter.
std::vector<int> CandidateNodes(int world, int nodes) {
  if (nodes > 0) return {nodes};
  std::vector<int> out;
  for (int n = 2; n <= world; ++n) {
    if (world % n == 0) out.push_back(n);
  }
  return out;
}

std::string Describe(const Found& f, int world, bool pinned) {
  return f.pick.winner + " (won " + std::to_string(f.pick.wins) + " of " +
         std::to_string(f.pick.records) + " problems of " + std::to_string(world) + " ranks" +
         (pinned ? "" : " over " + std::to_string(f.nodes) + " nodes") + ", fingerprint " +
         f.fingerprint +
         (f.pick.other_wins > 0
              ? "; other nccl-net settings won " + std::to_string(f.pick.other_wins) +
                    " problems: one setting per process"
              : "") +
         ")";
}

// CCLTUNE_NCCL_NET_SETTINGS: on (default) or off. One setting serves every message size of
// the process (NCCL reads it once), and may be slower than NCCL's own at the sizes it did not
// win: off keeps NCCL's. `*why` says so when off, or names a bad value (then off too).
bool NetSettingsOn(std::string* why) {
  const char* v = std::getenv("CCLTUNE_NCCL_NET_SETTINGS");
  if (v == nullptr || *v == '\0' || std::string_view(v) == "on") return true;
  *why = std::string_view(v) == "off" ? "off (CCLTUNE_NCCL_NET_SETTINGS=off): NCCL's own"
                                      : std::string("CCLTUNE_NCCL_NET_SETTINGS: '") + v +
                                            "' is not one of on, off: none set";
  return false;
}

// The variables of `env` the environment already holds, "K=V K=V", or "".
std::string HeldVars(const std::vector<std::pair<std::string, std::string>>& env) {
  const std::map<std::string, std::string> now = apply::NetSettingsInEnvironment();
  std::string held;
  for (const auto& [k, v] : env) {
    if (const auto it = now.find(k); it != now.end()) {
      held += (held.empty() ? "" : " ") + k + "=" + it->second;
    }
  }
  return held;
}

}  // namespace

const core::NodeExport& ExportNodeOnce() {
  static const core::NodeExport exported = core::ExportNodeNameToNccl();
  return exported;
}

NetPlan PlanNetSettings(const runtime::RuntimeConfig& cfg, int world, int nodes, int version) {
  NetPlan plan;
  if (!NetSettingsOn(&plan.text)) {
    plan.switched_off = true;
    return plan;
  }
  plan = WinnersNetPlan(cfg, world, nodes, version);
  // A setting was measured whole: half of it next to the user's value was never measured
  // (the calls then run the substitutes for its winners, runnable.h).
  if (const std::string held = HeldVars(plan.env); !held.empty()) {
    plan.text += "; none set: the environment holds " + held + " (a setting applies whole)";
    plan.withheld = true;
    plan.env.clear();
  }
  return plan;
}

NetPlan WinnersNetPlan(const runtime::RuntimeConfig& cfg, int world, int nodes, int version) {
  NetPlan plan;
  if (cfg.source.results_file.empty() && cfg.source.redis_url.empty()) {
    plan.text = "no winners source";
    return plan;
  }
  const bool pinned = !cfg.fingerprint.empty();
  const std::vector<int> counts = pinned ? std::vector<int>{nodes} : CandidateNodes(world, nodes);
  if (counts.empty()) {
    plan.text = "one rank: no network between ranks";
    return plan;
  }
  const auto deadline = std::chrono::steady_clock::now() + cfg.source.load_timeout;
  std::vector<Found> found;
  std::string problem;
  for (int n : counts) {
    core::Result<std::string> fp =
        gpu::CommunicatorFingerprint(world, n, version, cfg.fingerprint, cfg.fingerprint_source);
    if (!fp.ok()) {
      problem = "fingerprint: " + fp.status().message();
      continue;
    }
    core::Result<apply::ParsedFile> loaded = apply::LoadWinners(cfg.source, *fp, deadline);
    if (!loaded.ok()) {
      problem = "winners: " + loaded.status().message();
      continue;
    }
    apply::ProcessNetPick pick = apply::PickProcessNetSettings(loaded->records, world);
    if (!pick.env.empty()) found.push_back({n, *fp, std::move(pick)});
  }
  if (found.size() == 1) {
    plan.env = found[0].pick.env;
    plan.winner = found[0].pick.winner;
    plan.nodes = pinned ? 0 : found[0].nodes;
    plan.text = Describe(found[0], world, pinned);
  } else if (found.size() > 1) {
    plan.text = "nccl-net winners for " + std::to_string(found.size()) + " node counts of " +
                std::to_string(world) +
                " ranks: which one this process's communicators span is NCCL's to find at "
                "its init; none set";
    plan.withheld = true;
  } else {
    plan.text = "no nccl-net winner for " + std::to_string(world) + " ranks" +
                (problem.empty() ? "" : " (" + problem + ")");
  }
  return plan;
}

void BeforeFirstInit(int world, int rank) {
  static std::once_flag once;
  std::call_once(once, [world, rank] {
    if (!ShimOn()) return;
    const core::NodeExport& node = ExportNodeOnce();
    using What = core::NodeExport::What;
    const bool node_news = node.what != What::kNoNodeName && node.what != What::kAlreadySet;
    const bool node_problem = node.what == What::kConflict || node.what == What::kInvalid;
    core::Result<runtime::RuntimeConfig> cfg = runtime::ResolveConfig(nullptr);
    NetPlan plan;
    if (cfg.ok()) plan = PlanNetSettings(*cfg, world, 0, Real().version);
    std::string set;
    for (const auto& [k, v] : plan.env) {
      setenv(k.c_str(), v.c_str(), /*overwrite=*/0);
      set += (set.empty() ? "" : " ") + k + "=" + v;
    }
    if (!plan.env.empty()) {
      std::lock_guard<std::mutex> lock(g_mu);
      g_net_nodes = plan.nodes;
    }
    const bool net_news = !plan.env.empty() || plan.switched_off || plan.withheld;
    if (node_problem || ((node_news || net_news) && rank == 0)) {
      Note("before NCCL's first init: " + node.text +
           (net_news ? "; network settings: " + plan.text + (set.empty() ? "" : "; set " + set)
                     : ""));
    } else if (DebugOn()) {
      Debug("before NCCL's first init: " + node.text + "; network settings: " + plan.text);
    }
  });
}

std::string FirstInitMismatch(int nodes) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_net_nodes <= 0 || g_net_nodes == nodes) return "";
  return "; the nccl-net settings set at NCCL's first init were tuned for " +
         std::to_string(g_net_nodes) + " nodes, this communicator spans " + std::to_string(nodes);
}

}  // namespace ccltune::shim

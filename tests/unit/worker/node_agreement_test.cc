// The worker and the delivery side (plugin, libccltune, libccltune-nccl) must see the same
// number of nodes for the same split of ranks, or the fingerprint a program looks up is not
// the one `ccltune tune` published. Each rank's environment is replayed in turn: the worker
// settles its node (worker/rank/rank_node.h: the fingerprint counts the names, and NCCL_HOSTID
// is set to the name, so the worker's NCCL counts the same); a delivery process exports the
// node name to NCCL (core::ExportNodeNameToNccl, as the libraries do before NCCL's first init)
// and counts NCCL's own keys (core::NcclHostKey, what NCCL 2.28 hashes into nNodes).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/node/node_name.h"
#include "worker/rank/rank_node.h"

namespace ccltune {
namespace {

using Env = std::map<std::string, std::optional<std::string>>;

// Exactly `env` for the variables of the node rule (unset when nullopt or absent).
void Apply(const Env& env) {
  for (const char* name : {core::kNodeNameEnv, core::kNcclHostIdEnv}) {
    const auto it = env.find(name);
    if (it != env.end() && it->second)
      setenv(name, it->second->c_str(), 1);
    else
      unsetenv(name);
  }
}

struct Counts {
  int worker_names = 0;  // the worker's fingerprint `nodes`
  int worker_nccl = 0;   // what the worker's own NCCL counts (its NCCL_HOSTID keys)
  int delivery = 0;      // what the application's NCCL counts, and so the plugin and runtime
};

Counts CountFor(const std::vector<Env>& ranks) {
  std::vector<std::string> names;
  std::set<std::string> worker_keys, delivery_keys;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    Apply(ranks[r]);
    auto node = worker::SetUpRankNode({"", 0, static_cast<int>(r), static_cast<int>(ranks.size())});
    EXPECT_TRUE(node.ok()) << node.status().ToString();
    names.push_back(node.ok() ? *node : "?");
    worker_keys.insert(core::NcclHostKey());
    Apply(ranks[r]);  // a fresh process of the application
    (void)core::ExportNodeNameToNccl();
    delivery_keys.insert(core::NcclHostKey());
  }
  Apply({});
  return {core::ShapeOfNodes(names).nodes, static_cast<int>(worker_keys.size()),
          static_cast<int>(delivery_keys.size())};
}

void ExpectAllEqual(const std::vector<Env>& ranks, int nodes) {
  const Counts c = CountFor(ranks);
  EXPECT_EQ(c.worker_names, nodes);
  EXPECT_EQ(c.worker_nccl, nodes);
  EXPECT_EQ(c.delivery, nodes);
}

TEST(NodeAgreement, NodeNamePerHalfIsTwoNodesEverywhere) {
  const Env a{{core::kNodeNameEnv, "node-a"}}, b{{core::kNodeNameEnv, "node-b"}};
  ExpectAllEqual({a, a, b, b}, 2);
}

TEST(NodeAgreement, NcclHostIdPerHalfIsTwoNodesEverywhere) {
  const Env a{{core::kNcclHostIdEnv, "node-a"}}, b{{core::kNcclHostIdEnv, "node-b"}};
  ExpectAllEqual({a, a, b, b}, 2);
}

TEST(NodeAgreement, PodsSharingANodeNameAreOneNode) {
  // Two pods of one node: their host names differ (pod names), the downward API's node
  // name does not. Here the host name is this machine's; the node name decides alone.
  const Env pod{{core::kNodeNameEnv, "gpu-node-1"}};
  ExpectAllEqual({pod, pod, pod, pod}, 1);
}

TEST(NodeAgreement, NothingSetIsTheHostOnEverySide) { ExpectAllEqual({{}, {}, {}, {}}, 1); }

TEST(NodeAgreement, ExportSetsNcclHostIdOnlyWhenUnsetAndSaysWhy) {
  Apply({{core::kNodeNameEnv, "node-a"}});
  core::NodeExport e = core::ExportNodeNameToNccl();
  EXPECT_EQ(e.what, core::NodeExport::What::kSet);
  EXPECT_EQ(e.text, "NCCL_HOSTID='node-a' set from CCLTUNE_NODE_NAME");
  EXPECT_EQ(core::NcclHostKey(), "node-a");
  EXPECT_EQ(core::ExportNodeNameToNccl().what, core::NodeExport::What::kAlreadySet);

  Apply({{core::kNodeNameEnv, "node-a"}, {core::kNcclHostIdEnv, "node-b"}});
  e = core::ExportNodeNameToNccl();
  EXPECT_EQ(e.what, core::NodeExport::What::kConflict);
  EXPECT_EQ(std::string(std::getenv(core::kNcclHostIdEnv)), "node-b");  // never overwritten
  EXPECT_NE(e.text.find("NCCL groups ranks by NCCL_HOSTID"), std::string::npos) << e.text;

  Apply({{core::kNodeNameEnv, "two words"}});
  e = core::ExportNodeNameToNccl();
  EXPECT_EQ(e.what, core::NodeExport::What::kInvalid);
  EXPECT_EQ(std::getenv(core::kNcclHostIdEnv), nullptr);
  EXPECT_NE(e.text.find("CCLTUNE_NODE_NAME='two words'"), std::string::npos) << e.text;

  Apply({});
  e = core::ExportNodeNameToNccl();
  EXPECT_EQ(e.what, core::NodeExport::What::kNoNodeName);
  EXPECT_EQ(std::getenv(core::kNcclHostIdEnv), nullptr);
  Apply({});
}

TEST(NodeAgreement, NcclHostKeyWithoutHostIdIsHostNameAndBootIdAsNcclHashesIt) {
  Apply({});
  const std::string key = core::NcclHostKey();
  EXPECT_EQ(key.substr(key.size() - core::BootId().size()), core::BootId());
  EXPECT_GT(key.size(), core::BootId().size());  // the host name comes first, no separator
}

}  // namespace
}  // namespace ccltune

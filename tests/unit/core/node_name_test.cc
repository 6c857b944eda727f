// The node rule (core/node/node_name.h): where a rank's node name comes from, when it is refused,
// the emulated split, and the shape the fingerprint takes from the names.
#include "core/node/node_name.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <optional>

namespace ccltune::core {
namespace {

// Sets or unsets a variable for one test and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value->c_str(), 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string HostName() {
  std::array<char, 256> name{};
  gethostname(name.data(), name.size() - 1);
  return name.data();
}

TEST(NodeName, PodNodeNameWinsAndAgreeingHostIdIsAccepted) {
  ScopedEnv node(kNodeNameEnv, "gpu-node-7");
  ScopedEnv hostid(kNcclHostIdEnv, "gpu-node-7");
  auto got = LocalNodeName();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->name, "gpu-node-7");
  EXPECT_EQ(got->source, "CCLTUNE_NODE_NAME");
}

TEST(NodeName, NcclHostIdIsTheNodeWhenNoNodeNameIsGiven) {
  ScopedEnv node(kNodeNameEnv, std::nullopt);
  ScopedEnv hostid(kNcclHostIdEnv, "node-b");
  auto got = LocalNodeName();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->name, "node-b");
}

TEST(NodeName, HostNameOutsideKubernetes) {
  ScopedEnv node(kNodeNameEnv, std::nullopt);
  ScopedEnv hostid(kNcclHostIdEnv, std::nullopt);
  auto got = LocalNodeName();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->name, HostName());
  EXPECT_EQ(got->source, "host name");
}

TEST(NodeName, DisagreeingHostIdIsOneErrorNamingBoth) {
  ScopedEnv node(kNodeNameEnv, "node-a");
  ScopedEnv hostid(kNcclHostIdEnv, "node-b");
  auto got = LocalNodeName();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(got.status().message().find("NCCL_HOSTID='node-b' differs from CCLTUNE_NODE_NAME="
                                        "'node-a'"),
            std::string::npos)
      << got.status().message();
}

TEST(NodeName, BadNamesAreRefusedNamingTheField) {
  for (const std::string bad : {std::string("two words"), std::string(254, 'a'),
                                std::string("tab\there"), std::string("caf\xc3\xa9")}) {
    Status st = CheckNodeName(bad, "--node-name");
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(st.message().find("--node-name"), std::string::npos) << st.message();
  }
  EXPECT_FALSE(CheckNodeName("", "x").ok());
  EXPECT_TRUE(CheckNodeName("ip-10-0-0-12.ec2.internal", "x").ok());
  ScopedEnv node(kNodeNameEnv, "has space");
  auto got = LocalNodeName();
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("CCLTUNE_NODE_NAME='has space'"), std::string::npos);
}

TEST(EmulatedNodes, ConsecutiveRanksShareANode) {
  std::vector<std::string> names;
  for (int r = 0; r < 8; ++r) names.push_back(EmulatedNodeName("box", r, 8, 4));
  EXPECT_EQ(names, (std::vector<std::string>{"box-node0", "box-node0", "box-node1", "box-node1",
                                             "box-node2", "box-node2", "box-node3", "box-node3"}));
  const NodeShape shape = ShapeOfNodes(names);
  EXPECT_EQ(shape.nodes, 4);
  EXPECT_EQ(shape.gpus_per_node, 2);
  EXPECT_TRUE(shape.equal_groups);
}

TEST(EmulatedNodes, CountMustDivideTheRanks) {
  EXPECT_TRUE(CheckEmulatedNodes(0, 4, "f").ok());
  EXPECT_TRUE(CheckEmulatedNodes(1, 4, "f").ok());
  EXPECT_TRUE(CheckEmulatedNodes(4, 4, "f").ok());
  for (int bad : {-1, 3, 5, 8}) {
    Status st = CheckEmulatedNodes(bad, 4, "spec.emulatedNodes");
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(st.message().rfind("spec.emulatedNodes: ", 0), 0u) << st.message();
    EXPECT_NE(st.message().find("4 ranks"), std::string::npos) << st.message();
  }
}

TEST(NodeShape, UnequalGroupsAreReportedAndGpusPerNodeIsRanksOverNodes) {
  const NodeShape shape = ShapeOfNodes({"a", "a", "a", "b"});
  EXPECT_EQ(shape.nodes, 2);
  EXPECT_EQ(shape.gpus_per_node, 2);  // the rule NCCL's (nRanks, nNodes) allows the plugin
  EXPECT_FALSE(shape.equal_groups);
  EXPECT_EQ(GpusPerNode(8, 0), 8);
  EXPECT_EQ(GpusPerNode(1, 4), 1);
}

TEST(NodeIdentity, CarriesBootIdAndNodeName) {
  ScopedEnv node(kNodeNameEnv, "node-x");
  ScopedEnv hostid(kNcclHostIdEnv, std::nullopt);
  const std::string id = NodeIdentity();
  EXPECT_EQ(NodeOfIdentity(id), "node-x");
  EXPECT_EQ(BootOfIdentity(id).size(), 36u) << id;  // a UUID from /proc
  ScopedEnv other(kNodeNameEnv, "node-y");
  EXPECT_NE(NodeIdentity(), id);  // same kernel, other node: emulated nodes differ
}

}  // namespace
}  // namespace ccltune::core

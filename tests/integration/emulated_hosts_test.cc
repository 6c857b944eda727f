// Emulated nodes' own host names (issue 33: "each group gets its own node name and
// NCCL_HOSTID, and, where permitted, its own UTS hostname"): `ccltune tune --emulate-nodes 2`
// with the real binary, real rank processes and a real redis-server. Where this process may
// make a UTS namespace (CAP_SYS_ADMIN; root on the GPU machines), each rank's join record must
// carry its node's name as its host name; elsewhere the ranks keep the machine's and each
// says why in one line. Either way the node names are the emulated ones.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "tests/integration/ccltune_process.h"
#include "tests/support/redis_test.h"

namespace ccltune::testing {
namespace {

// Whether a child of this process may enter a UTS namespace of its own, asked as the ranks
// will (a forked child, so this test's own host name stays).
bool MayUnshareUts() {
  const pid_t pid = fork();
  if (pid == 0) _exit(unshare(CLONE_NEWUTS) == 0 ? 0 : 1);
  int status = 0;
  return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

class EmulatedHostsTest : public RedisTest {};

TEST_F(EmulatedHostsTest, EachEmulatedNodesRanksGetItsNameAsHostNameWherePermitted) {
  const RunResult run = RunCcltune(
      HostTuneArgs(4, redis_->url(),
                   {"--emulate-nodes", "2", "--op", "allReduce", "--sizes", "4KiB", "--iters", "2",
                    "--rounds", "2", "--warmup", "1", "--no-publish", "-v"}),
      {}, 120);
  ASSERT_EQ(run.code, 0) << run.output;
  auto keys = client_->Command({"KEYS", "ccltune:v1:job:*:rank:*"});
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  ASSERT_EQ(keys->elements.size(), 4u) << run.output;
  const bool may = MayUnshareUts();
  std::set<std::string> nodes;
  for (const auto& key : keys->elements) {
    auto text = client_->Command({"GET", key.str});
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    const nlohmann::json record = nlohmann::json::parse(text->str);
    const std::string node = record.at("node"), host = record.at("host");
    nodes.insert(node);
    EXPECT_TRUE(std::regex_match(node, std::regex(".+-node[01]"))) << node;
    if (may) {
      EXPECT_EQ(host, node) << key.str;
    } else {
      EXPECT_NE(host, node) << key.str;
    }
  }
  EXPECT_EQ(nodes.size(), 2u);
  const std::regex said(may ? "own host name \\S+-node[01]\\)"
                            : "no own host name \\(unshare\\(CLONE_NEWUTS\\): .*CAP_SYS_ADMIN\\)");
  const auto lines = std::distance(std::sregex_iterator(run.output.begin(), run.output.end(), said),
                                   std::sregex_iterator());
  EXPECT_EQ(lines, 4) << run.output;
}

}  // namespace
}  // namespace ccltune::testing

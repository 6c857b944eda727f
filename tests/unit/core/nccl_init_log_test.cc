// NCCL's INFO log as the summary reads it (core/node/nccl_init_log.h), on lines in NCCL 2.28.9's
// formats (src/debug.cc prefix, src/init.cc, src/transport/{p2p,shm,net}.cc): the
// 2 x 2 emulated split of issue 33 (P2P inside each half, NET/Socket between them).
#include "core/node/nccl_init_log.h"

#include <gtest/gtest.h>

#include <sstream>

namespace ccltune::core {
namespace {

// Rank 1's and rank 2's logs of a 4-rank communicator over two emulated nodes, with the
// lines around them that the parser must pass over.
constexpr const char* kRank1 =
    R"(gpu-box:4122:4122 [1] NCCL INFO NCCL_HOSTID set by environment to gpu-box-node0
gpu-box:4122:4122 [1] NCCL INFO cudaDriverVersion 13000
gpu-box:4122:4180 [1] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>
gpu-box:4122:4180 [1] NCCL INFO comm 0x55d1c2a0 rank 1 nRanks 4 nNodes 2 localRanks 2 localRank 1 MNNVL 0
gpu-box:4122:4180 [1] NCCL INFO Channel 00/02 :    0   1   2   3
gpu-box:4122:4180 [1] NCCL INFO Trees [0] -1/-1/-1->1->0 [1] 0/-1/-1->1->-1
gpu-box:4122:4191 [1] NCCL INFO Channel 00/0 : 1[1] -> 2[2] [send] via NET/Socket/0
gpu-box:4122:4191 [1] NCCL INFO Channel 01/0 : 1[1] -> 2[2] [send] via NET/Socket/0
gpu-box:4122:4190 [1] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read
gpu-box:4122:4122 [1] NCCL INFO Connected all rings, use ring PXN 0 GDR 0
)";
constexpr const char* kRank2 =
    R"(gpu-box:4123:4181 [2] NCCL INFO comm 0x5620a1b0 rank 2 nRanks 4 nNodes 2 localRanks 2 localRank 0 MNNVL 0
gpu-box:4123:4192 [2] NCCL INFO Channel 00/0 : 1[1] -> 2[2] [receive] via NET/Socket/0
gpu-box:4123:4192 [2] NCCL INFO Channel 00/0 : 2[2] -> 3[3] via P2P/CUMEM/read
gpu-box:4123:4192 [2] NCCL INFO Channel 01/0 : 2[2] -> 3[3] via SHM/direct/direct
gpu-box:4123:4123 [2] enqueue.cc:1234 NCCL WARN Channel 00/0 : 9[9] -> 9[9] via P2P/nothing
)";

NcclInitLog Parse(const char* text) {
  std::istringstream in(text);
  return ParseNcclInitLog(in);
}

TEST(NcclInitLog, ReadsNodeCountAndDistinctLinks) {
  const NcclInitLog log = Parse(kRank1);
  EXPECT_EQ(log.n_nodes, (std::set<int>{2}));
  EXPECT_EQ(log.links,
            (std::set<NcclLink>{{1, 2, "NET/Socket/0", 1, 2}, {0, 1, "P2P/CUMEM/read", 0, 1}}));
}

TEST(NcclInitLog, IgnoresRingListsWarningsAndOtherLines) {
  const NcclInitLog log = Parse(kRank2);
  EXPECT_EQ(log.links.size(), 3u);  // the WARN line is not a connection
  for (const NcclLink& l : log.links) EXPECT_NE(l.from, 9);
}

TEST(NcclInitLog, TransportKinds) {
  EXPECT_EQ(TransportKind("NET/Socket/0"), "NET/Socket");
  EXPECT_EQ(TransportKind("NET/IB/0/GDRDMA"), "NET/IB");
  EXPECT_EQ(TransportKind("NET/IB/1(3)/GDRDMA(PCI)/Shared"), "NET/IB");
  EXPECT_EQ(TransportKind("P2P/CUMEM/read"), "P2P");
  EXPECT_EQ(TransportKind("P2P/direct"), "P2P");
  EXPECT_EQ(TransportKind("SHM/direct/direct"), "SHM");
  EXPECT_EQ(TransportKind("NET"), "NET");
}

TEST(NcclInitLog, ClassifiesLinksByTheRanksNodes) {
  NcclInitLog all = Parse(kRank1);
  all.Merge(NcclInitLog::FromJson(Parse(kRank2).ToJson()));  // as ranks send them to rank 0
  const NcclTopology t =
      ClassifyLinks(all, {"gpu-box-node0", "gpu-box-node0", "gpu-box-node1", "gpu-box-node1"});
  EXPECT_EQ(t.n_nodes, (std::set<int>{2}));
  EXPECT_EQ(t.intra_node, (std::set<std::string>{"P2P", "SHM"}));
  EXPECT_EQ(t.inter_node, (std::set<std::string>{"NET/Socket"}));
  EXPECT_EQ(DescribeNcclTopology(t.ToJson()),
            "NCCL formed 2 node(s); P2P+SHM inside nodes; NET/Socket between them");
}

TEST(NcclInitLog, OneNodeHasNoInterNodeTransport) {
  const NcclTopology t = ClassifyLinks(Parse(kRank1), {"n", "n", "n", "n"});
  EXPECT_TRUE(t.inter_node.empty());
  EXPECT_EQ(t.intra_node, (std::set<std::string>{"NET/Socket", "P2P"}));
}

// A rank of `nccl-net:socketThreads=4,socksPerThread=4`'s own processes (issue 33): NCCL logs
// its socket threads at every listen and connect; the summary says what NCCL applied.
TEST(NcclInitLog, ReadsTheSocketThreadsNcclApplied) {
  const std::string threads =
      "gpu-box:4222:4291 [2] NCCL INFO NET/Socket: Using 4 threads and 4 sockets per thread\n";
  NcclInitLog log = Parse((std::string(kRank2) + threads + threads).c_str());
  EXPECT_EQ(log.net_socket, (std::set<std::string>{"4 threads x 4 sockets"}));
  log = NcclInitLog::FromJson(log.ToJson());
  EXPECT_EQ(log.net_socket, (std::set<std::string>{"4 threads x 4 sockets"}));
  const NcclTopology t =
      ClassifyLinks(log, {"gpu-box-node0", "gpu-box-node0", "gpu-box-node1", "gpu-box-node1"});
  EXPECT_EQ(DescribeNcclTopology(t.ToJson()),
            "NCCL formed 2 node(s); P2P+SHM inside nodes; NET/Socket between them; NET/Socket 4 "
            "threads x 4 sockets");
  // NCCL's default here (no helper threads) logs no such line, and the JSON keeps its shape.
  EXPECT_FALSE(Parse(kRank1).ToJson().contains("netSocket"));
}

// Rank 0 of a job that runs the hierarchical all-reduce (issue 33): besides the job's
// communicator it holds one split by local rank (job ranks 0 and 2, renumbered 0 and 1),
// whose connection lines look like the job's. On 4 H100s the summary read "NET/Socket+P2P
// inside nodes" from them. The devices tell them apart: the job's rank 1 is device 1, the
// split's rank 1 device 2.
constexpr const char* kRank0WithSplit =
    R"(gpu-box:4121:4121 [0] NCCL INFO comm 0x55d1c000 rank 0 nRanks 4 nNodes 2 localRanks 2 localRank 0 MNNVL 0
gpu-box:4121:4121 [0] NCCL INFO ncclCommInitRankConfig comm 0x55d1c000 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 60 commId 0x57fe245cbb124f8a - Init COMPLETE
gpu-box:4121:4121 [0] NCCL INFO comm 0x55e00000 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0
gpu-box:4121:4121 [0] NCCL INFO ncclCommSplit comm 0x55e00000 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 60 commId 0x1234 - Init COMPLETE
gpu-box:4121:4190 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read
gpu-box:4121:4190 [0] NCCL INFO Channel 00/0 : 3[3] -> 0[0] [receive] via NET/Socket/0
gpu-box:4121:4195 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[2] [send] via NET/Socket/0
gpu-box:4121:4195 [0] NCCL INFO Channel 00/0 : 1[2] -> 0[0] [receive] via NET/Socket/0
)";

TEST(NcclInitLog, LinksOfAnotherCommunicatorOfTheProcessAreLeftOut) {
  NcclInitLog log = Parse(kRank0WithSplit);
  EXPECT_EQ(log.devices.at(4), (std::map<int, int>{{0, 0}}));
  EXPECT_EQ(log.devices.at(2), (std::map<int, int>{{0, 0}}));
  log.Merge(NcclInitLog::FromJson(
      Parse(
          "h:1:1 [1] NCCL INFO ncclCommInitRankConfig comm 0x1 rank 1 nranks 4 cudaDev 1 nvmlDev 1 "
          "busId 70 commId 0x57fe245cbb124f8a - Init COMPLETE\n")
          .ToJson()));
  const std::vector<std::string> nodes = {"gpu-box-node0", "gpu-box-node0", "gpu-box-node1",
                                          "gpu-box-node1"};
  const NcclTopology t = ClassifyLinks(NcclInitLog::FromJson(log.ToJson()), nodes);
  EXPECT_EQ(t.intra_node, (std::set<std::string>{"P2P"}));
  EXPECT_EQ(t.inter_node, (std::set<std::string>{"NET/Socket"}));
  // Without the devices (a log that lacks the Init COMPLETE lines) every link counts, as before.
  NcclInitLog bare = log;
  bare.devices.clear();
  EXPECT_EQ(ClassifyLinks(bare, nodes).intra_node, (std::set<std::string>{"NET/Socket", "P2P"}));
}

TEST(NcclInitLog, SaysWhenNothingWasLogged) {
  EXPECT_EQ(DescribeNcclTopology(ClassifyLinks(NcclInitLog{}, {"a"}).ToJson()),
            "NCCL formed ? (no nNodes line) node(s); no channel connection logged");
}

}  // namespace
}  // namespace ccltune::core

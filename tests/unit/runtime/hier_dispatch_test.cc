// The hierarchical all-reduce in the runtime (issue 33) without a GPU: when init builds the
// node team (PlanNodeTeam: nodes of equal rank counts, 2-8 ranks each, peer memory allowed),
// which buffer class runs a hier winner (both: the phases run in the node scratch the call's
// buffers are copied through), the fallback and its reason when the team is not up, and what
// an exact call still rules out (a count the node's ranks do not divide, a message the
// scratch cannot hold).
#include <gtest/gtest.h>

#include "runtime/dispatch_table.h"
#include "runtime/node_team_plan.h"
#include "tests/unit/runtime/record_builder.h"

namespace ccltune::runtime {
namespace {

using core::Dtype;
using core::Op;
using core::RedOp;

constexpr const char* kHier = "hier:blocks=16,threads=256";

// Two nodes of two, as NCCL groups them (NCCL_HOSTID per half), node team up.
Capabilities TwoNodesOfTwo(std::string hier_problem = "") {
  Capabilities caps{4, "peer memory (CUDA IPC) joins the ranks of one node"};
  caps.span = {2, 2, true};
  caps.hier_problem = std::move(hier_problem);
  return caps;
}

// The 4xH100 sweep's shape at 2 x 2 (tests/gpu/results/nodes-4xH100.md): hier wins 512 KiB.
std::vector<apply::WinnerRecord> HierSweep() {
  return {
      MakeRecord(Op::kAllReduce, 8192, 4, {{"nccl", 76.0}, {kHier, 90.0}, {"rs+ag", 120.0}}),
      MakeRecord(Op::kAllReduce, 512 << 10, 4, {{"nccl", 300.0}, {kHier, 195.0}, {"rs+ag", 280.0}}),
      MakeRecord(Op::kAllGather, 512 << 10, 4, {{"nccl", 300.0}}),
  };
}

TEST(NodeTeamPlan, BuiltOnlyForEqualNodesOfTwoToEightRanksWithPeerMemory) {
  const NodeTeamPlan two = PlanNodeTeam({"a", "a", "b", "b"}, 3, true);
  EXPECT_EQ(two.why_not, "");
  EXPECT_EQ(two.span.nodes, 2);
  EXPECT_EQ(two.span.ranks_per_node, 2);
  EXPECT_EQ(two.place.node, 1);
  EXPECT_EQ(two.place.local_rank, 1);
  EXPECT_EQ(two.place.node_ranks, (std::vector<int>{2, 3}));
  // Ranks interleaved over the nodes: local ranks follow rank order inside each node.
  const NodeTeamPlan mixed = PlanNodeTeam({"a", "b", "a", "b"}, 2, true);
  EXPECT_EQ(mixed.why_not, "");
  EXPECT_EQ(mixed.place.node, 0);
  EXPECT_EQ(mixed.place.local_rank, 1);
  EXPECT_EQ(mixed.place.node_ranks, (std::vector<int>{0, 2}));

  EXPECT_NE(PlanNodeTeam({"a", "a", "a", "a"}, 0, true).why_not.find("one node"),
            std::string::npos);
  EXPECT_NE(PlanNodeTeam({"a", "a", "a", "b"}, 0, true).why_not.find("unequal ranks per node"),
            std::string::npos);
  EXPECT_NE(PlanNodeTeam({"a", "b"}, 0, true).why_not.find("one rank per node"), std::string::npos);
  std::vector<std::string> nine_each(9, "a");
  nine_each.resize(18, "b");
  EXPECT_NE(PlanNodeTeam(nine_each, 0, true).why_not.find("9 ranks per node"), std::string::npos);
  EXPECT_NE(PlanNodeTeam({"a", "a", "b", "b"}, 0, false).why_not.find("peer memory turned off"),
            std::string::npos);
}

TEST(HierDispatch, AWinnerRunsForPlainAndPooledBuffersWhenTheNodeTeamIsUp) {
  const DispatchTable t = DispatchTable::Build(HierSweep(), TwoNodesOfTwo());
  EXPECT_TRUE(t.HierNeeded());
  for (BufferClass cls : {BufferClass::kPlain, BufferClass::kPooled}) {
    const AppliedRun& run = t.Choose(Op::kAllReduce, Dtype::kBf16, RedOp::kSum, 512 << 10, cls);
    EXPECT_EQ(run.name, kHier);
    EXPECT_EQ(run.spec.compose, apply::Composition::kHierarchical);
    EXPECT_EQ(t.Choose(Op::kAllReduce, Dtype::kBf16, RedOp::kSum, 8192, cls).name, "nccl");
  }
}

TEST(HierDispatch, WithoutTheNodeTeamTheNextChoiceRunsAndSaysWhy) {
  const DispatchTable t =
      DispatchTable::Build(HierSweep(), TwoNodesOfTwo("rank 2's node: cudaIpcOpenMemHandle"));
  EXPECT_FALSE(t.HierNeeded());
  const TableEntry* e = t.Lookup(Op::kAllReduce, Dtype::kBf16, RedOp::kSum, 512 << 10);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->winner, kHier);
  for (const AppliedRun* run : {&e->plain, &e->pooled}) {
    EXPECT_EQ(run->name, "rs+ag");
    EXPECT_NE(run->reason.find("no node team: rank 2's node: cudaIpcOpenMemHandle"),
              std::string::npos)
        << run->reason;
  }
  // The table the team was tentatively built for differs, so ranks that disagree on the
  // team would disagree on the digest.
  EXPECT_NE(t.Digest(), DispatchTable::Build(HierSweep(), TwoNodesOfTwo()).Digest());
}

TEST(HierDispatch, NodeShapesAndProblemsItCannotRunFallBack) {
  const auto hier = ParseRuntimeChoice(kHier).value();
  core::Problem p;
  p.op = Op::kAllReduce;
  p.dtype = Dtype::kBf16;
  p.redop = RedOp::kSum;
  p.bytes = 512 << 10;
  EXPECT_EQ(WhyNotRunnable(hier, p, TwoNodesOfTwo(), BufferClass::kPlain), "");
  Capabilities one_node = TwoNodesOfTwo();
  one_node.span = {1, 4, true};
  EXPECT_NE(WhyNotRunnable(hier, p, one_node, BufferClass::kPooled).find("one node"),
            std::string::npos);
  p.dtype = Dtype::kInt32;  // our reducing kernels take fp32, fp16 and bf16
  EXPECT_NE(WhyNotRunnable(hier, p, TwoNodesOfTwo(), BufferClass::kPlain), "");
  p.dtype = Dtype::kBf16;
  p.op = Op::kAllGather;
  EXPECT_NE(WhyNotRunnable(hier, p, TwoNodesOfTwo(), BufferClass::kPlain).find("allReduce"),
            std::string::npos);
}

TEST(HierDispatch, ACallTheNodeCannotSplitOrTheScratchCannotHoldRunsNccl) {
  const auto hier = ParseRuntimeChoice(kHier).value();
  CallShape call{Op::kAllReduce, Dtype::kBf16, 262144, 4, false, false, 2, 64 << 20};
  EXPECT_EQ(WhyNotForCall(hier, call, BufferClass::kPlain), "");
  call.in_place = true;  // copied through scratch: in place is no different
  EXPECT_EQ(WhyNotForCall(hier, call, BufferClass::kPlain), "");
  call.count = 262145;
  EXPECT_EQ(WhyNotForCall(hier, call, BufferClass::kPooled),
            "element count not divisible by the ranks per node");
  // 512 KiB in and out take 1 MiB of scratch.
  call.count = 262144;
  EXPECT_EQ(HierScratchBytes(512 << 10), std::uint64_t{1} << 20);
  EXPECT_EQ(HierScratchBytes(100), 512u);
  call.hier_scratch_bytes = (1 << 20) - 1;
  EXPECT_NE(
      WhyNotForCall(hier, call, BufferClass::kPlain).find("raise ccltuneConfig_t.stagingBytes"),
      std::string::npos);
  call.hier_scratch_bytes = 0;  // no node team: never runs (the table says so first)
  EXPECT_NE(WhyNotForCall(hier, call, BufferClass::kPlain), "");
}

}  // namespace
}  // namespace ccltune::runtime

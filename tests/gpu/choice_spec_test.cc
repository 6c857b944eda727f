// The NCCL choice catalog without a GPU: names parse strictly, the default comes first,
// and every choice that cannot run says why (docs/design.md §5: skipped with a reason, never
// silently).
#include <gtest/gtest.h>

#include <set>

#include "core/apply/process_setting.h"
#include "worker/nccl/choice_catalog.h"
#include "worker/nccl/inproc_tuner_api.h"

namespace ccltune::worker::nccl {
namespace {

CatalogContext Ctx() {
  CatalogContext c;
  c.world = 4;
  c.nccl_version = 22803;
  c.tuner_loaded = true;
  return c;
}

core::Problem Prob(core::Op op, std::uint64_t bytes = 1 << 20) {
  return {op,
          core::Dtype::kBf16,
          core::IsReducing(op) ? core::RedOp::kSum : core::RedOp::kNone,
          bytes,
          {}};
}

TEST(NcclChoiceSpec, ParsesForcedAlgoAndCtas) {
  auto s = SpecFromChoice({"nccl", {{"algo", "tree"}, {"proto", "ll128"}}});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->algo, kCcltuneAlgoTree);
  EXPECT_EQ(s->proto, kCcltuneProtoLL128);
  auto c = SpecFromChoice({"nccl", {{"ctas", "8"}}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->ctas, 8);
}

TEST(NcclChoiceSpec, RejectsUnknownValuesNamingTheAllowedOnes) {
  auto bad_algo = SpecFromChoice({"nccl", {{"algo", "nvls"}, {"proto", "ll"}}});
  ASSERT_FALSE(bad_algo.ok());
  EXPECT_NE(bad_algo.status().message().find("ring, tree"), std::string::npos);
  EXPECT_FALSE(SpecFromChoice({"nccl", {{"ctas", "3"}}}).ok());
  EXPECT_FALSE(SpecFromChoice({"nccl", {{"algo", "ring"}}}).ok());  // proto missing
  EXPECT_FALSE(SpecFromChoice({"nccl", {{"colour", "red"}}}).ok());
  EXPECT_FALSE(SpecFromChoice({"mpi", {}}).ok());
}

TEST(NcclChoiceSpec, AllReduceCatalogHasTheFullGridDefaultFirst) {
  const auto cands = BuildCandidates(Prob(core::Op::kAllReduce), Ctx());
  ASSERT_FALSE(cands.empty());
  EXPECT_EQ(cands[0].name.base, "nccl");
  EXPECT_TRUE(cands[0].name.params.empty());
  std::set<std::string> applicable;
  for (const auto& c : cands) {
    if (c.applicable())
      applicable.insert(c.name.base + ":" +
                        (c.name.params.count("algo")
                             ? c.name.params.at("algo") + "/" + c.name.params.at("proto")
                             : ""));
    else
      EXPECT_FALSE(c.skip_reason.empty());
  }
  for (const char* combo :
       {"nccl:ring/ll", "nccl:ring/ll128", "nccl:ring/simple", "nccl:tree/ll", "nccl:tree/ll128",
        "nccl:tree/simple", "rs+ag:", "nccl-reg:", "nccl-symm:"}) {
    EXPECT_TRUE(applicable.count(combo)) << combo;
  }
}

TEST(NcclChoiceSpec, InapplicableChoicesCarryReasons) {
  const CatalogContext ctx = Ctx();
  EXPECT_NE(
      SkipReason({"nccl", {{"algo", "tree"}, {"proto", "ll"}}}, Prob(core::Op::kAllGather), ctx)
          .find("allReduce only"),
      std::string::npos);
  EXPECT_NE(SkipReason({"rs+ag", {}}, Prob(core::Op::kBroadcast), ctx).find("allReduce"),
            std::string::npos);
  EXPECT_EQ(SkipReason({"oneshot", {}}, Prob(core::Op::kAllReduce), ctx),
            "peer memory unavailable: peer memory not probed");
  // 1 MiB + 2 bytes of bf16: 524289 elements, not divisible by 4 ranks.
  EXPECT_NE(
      SkipReason({"rs+ag", {}}, Prob(core::Op::kAllReduce, (1 << 20) + 2), ctx).find("divisible"),
      std::string::npos);
  EXPECT_NE(SkipReason({"nccl", {{"p2pchunk", "524288"}}}, Prob(core::Op::kAllToAll), ctx)
                .find("ncclConfig_t"),
            std::string::npos);
  CatalogContext old = ctx;
  old.nccl_version = 22603;
  EXPECT_NE(SkipReason({"nccl-symm", {}}, Prob(core::Op::kAllReduce), old).find("2.27"),
            std::string::npos);
  CatalogContext no_tuner = ctx;
  no_tuner.tuner_loaded = false;
  no_tuner.tuner_problem = "not found";
  EXPECT_NE(SkipReason({"nccl", {{"algo", "ring"}, {"proto", "ll"}}}, Prob(core::Op::kAllReduce),
                       no_tuner)
                .find("not found"),
            std::string::npos);
  EXPECT_FALSE(SkipReason({"test-hang", {}}, Prob(core::Op::kAllReduce), ctx).empty());
  CatalogContext alone = ctx;
  alone.world = 1;
  EXPECT_NE(SkipReason({"nccl", {{"algo", "ring"}, {"proto", "simple"}}},
                       Prob(core::Op::kAllReduce), alone)
                .find("one rank"),
            std::string::npos);
  EXPECT_EQ(SkipReason({"nccl", {{"ctas", "8"}}}, Prob(core::Op::kAllReduce), alone), "");
}

TEST(NcclChoiceSpec, PeerChoicesParseAndSayWhereTheyApply) {
  auto s = SpecFromChoice({"twoshot", {{"blocks", "32"}, {"threads", "512"}, {"mode", "push"}}});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->compose, Composition::kPeer);
  EXPECT_EQ(s->peer, PeerKind::kTwoShot);
  EXPECT_EQ(s->blocks, 32);
  EXPECT_TRUE(s->push);
  EXPECT_NE(SpecFromChoice({"oneshot", {{"blocks", "257"}}}).status().message().find("256"),
            std::string::npos);
  EXPECT_EQ(s->unroll, 1);
  auto u = SpecFromChoice({"twoshot", {{"unroll", "2"}}});
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->unroll, 2);
  EXPECT_NE(SpecFromChoice({"twoshot", {{"unroll", "4"}}}).status().message().find("one of 1, 2"),
            std::string::npos);
  EXPECT_NE(SpecFromChoice({"oneshot", {{"mode", "ll"}, {"unroll", "2"}}})
                .status()
                .message()
                .find("mode=ll"),
            std::string::npos);
  EXPECT_NE(SpecFromChoice({"p2p", {{"speed", "2"}}}).status().message().find("unroll"),
            std::string::npos);
  EXPECT_NE(SpecFromChoice({"ce", {{"blocks", "8"}}}).status().message().find("one of mode"),
            std::string::npos);
  EXPECT_NE(SpecFromChoice({"p2p", {{"mode", "both"}}}).status().message().find("pull, push"),
            std::string::npos);
  EXPECT_NE(SpecFromChoice({"twoshot", {{"mode", "ll"}}}).status().message().find("one-shot only"),
            std::string::npos);
  auto ll = SpecFromChoice({"oneshot", {{"mode", "ll"}}});
  ASSERT_TRUE(ll.ok());
  EXPECT_TRUE(ll->ll);

  CatalogContext ctx = Ctx();
  ctx.peer_problem.clear();
  EXPECT_EQ(SkipReason({"oneshot", {}}, Prob(core::Op::kAllReduce), ctx), "");
  EXPECT_EQ(SkipReason({"twoshot", {}}, Prob(core::Op::kReduceScatter), ctx), "");
  EXPECT_EQ(SkipReason({"ce", {}}, Prob(core::Op::kAllGather), ctx), "");
  EXPECT_NE(SkipReason({"oneshot", {}}, Prob(core::Op::kAllGather), ctx), "");
  EXPECT_NE(SkipReason({"p2p", {}}, Prob(core::Op::kAllReduce), ctx), "");
  EXPECT_NE(SkipReason({"oneshot", {}}, Prob(core::Op::kAllReduce, 64 << 20), ctx).find("16 MiB"),
            std::string::npos);
  EXPECT_NE(SkipReason({"oneshot", {{"mode", "ll"}}}, Prob(core::Op::kAllReduce, 2 << 20), ctx)
                .find("1 MiB"),
            std::string::npos);
  core::Problem prod = Prob(core::Op::kAllReduce);
  prod.redop = core::RedOp::kProd;
  EXPECT_NE(SkipReason({"twoshot", {}}, prod, ctx).find("sum, max, min and avg"),
            std::string::npos);
  core::Problem ints = Prob(core::Op::kAllReduce);
  ints.dtype = core::Dtype::kInt32;
  EXPECT_NE(SkipReason({"twoshot", {}}, ints, ctx).find("fp32, fp16 and bf16"), std::string::npos);
  ctx.peer_problem = "ranks span nodes";
  EXPECT_EQ(SkipReason({"twoshot", {}}, Prob(core::Op::kAllReduce), ctx),
            "peer memory unavailable: ranks span nodes");

  // The catalog offers each kernel where it applies, and test-absent only when asked.
  auto names = [&](core::Op op) {
    std::set<std::string> out;
    for (const auto& c : CatalogChoices(op, ctx)) out.insert(c.base);
    return out;
  };
  EXPECT_TRUE(names(core::Op::kAllReduce).count("oneshot"));
  EXPECT_TRUE(names(core::Op::kReduceScatter).count("twoshot"));
  EXPECT_FALSE(names(core::Op::kReduceScatter).count("oneshot"));
  EXPECT_TRUE(names(core::Op::kAllGather).count("ce"));
  EXPECT_TRUE(names(core::Op::kAllGather).count("p2p"));
  EXPECT_FALSE(names(core::Op::kAllReduce).count("test-absent"));
}

core::Problem NormProblem(std::uint64_t tokens, int hidden,
                          core::Dtype dtype = core::Dtype::kBf16) {
  core::Problem p = Prob(core::Op::kAllReduce);
  p.dtype = dtype;
  p.epilogue = {core::EpilogueKind::kResidualRmsNorm, hidden, 1e-5};
  p.bytes = tokens * hidden * core::DtypeSize(dtype);
  return p;
}

TEST(NcclChoiceSpec, FusedChoicesParseAndRunOnlyWithAnEpilogue) {
  auto s =
      SpecFromChoice({"oneshot-fused", {{"blocks", "16"}, {"mode", "ll"}, {"threads", "512"}}});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(s->fused);
  EXPECT_TRUE(s->ll);
  EXPECT_EQ(s->peer, PeerKind::kOneShot);
  auto t = SpecFromChoice({"twoshot-fused", {{"mode", "pull"}}});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->peer, PeerKind::kTwoShot);
  EXPECT_FALSE(SpecFromChoice({"oneshot", {}})->fused);
  EXPECT_NE(SpecFromChoice({"oneshot-fused", {{"mode", "push"}}})
                .status()
                .message()
                .find("fused kernels do not push"),
            std::string::npos);
  EXPECT_NE(
      SpecFromChoice({"twoshot-fused", {{"mode", "ll"}}}).status().message().find("one-shot only"),
      std::string::npos);
  EXPECT_FALSE(core::ParseChoice("oneshot-fused:unroll=2", "nccl").ok());
  EXPECT_FALSE(core::ParseChoice("twoshot-fused:blocks=8", "host").ok());

  CatalogContext ctx = Ctx();
  ctx.peer_problem.clear();
  const core::ChoiceName fused{"oneshot-fused", {{"threads", "512"}}};
  EXPECT_NE(SkipReason(fused, Prob(core::Op::kAllReduce), ctx).find("epilogue"), std::string::npos);
  EXPECT_EQ(SkipReason(fused, NormProblem(8, 4096), ctx), "");
  // A thread keeps 32 elements of its row: 16384 needs 512 threads.
  EXPECT_EQ(SkipReason(fused, NormProblem(1, 16384, core::Dtype::kFp32), ctx), "");
  const core::ChoiceName narrow{"oneshot-fused", {{"threads", "256"}}};
  EXPECT_EQ(SkipReason(narrow, NormProblem(1, 8192), ctx), "");
  EXPECT_NE(SkipReason(narrow, NormProblem(1, 16384), ctx).find("at least 512 threads"),
            std::string::npos);
  EXPECT_NE(
      SkipReason({"oneshot-fused", {{"mode", "ll"}}}, NormProblem(2048, 4096), ctx).find("1 MiB"),
      std::string::npos);
  // Unfused choices stay: "this all-reduce, then the separate kernel".
  EXPECT_EQ(SkipReason({"oneshot", {}}, NormProblem(8, 4096), ctx), "");

  std::set<std::string> plain, norm;
  for (const auto& c : BuildCandidates(Prob(core::Op::kAllReduce), ctx)) plain.insert(c.name.base);
  for (const auto& c : BuildCandidates(NormProblem(8, 4096), ctx)) norm.insert(c.name.base);
  EXPECT_FALSE(plain.count("oneshot-fused"));
  EXPECT_TRUE(norm.count("oneshot-fused"));
  EXPECT_TRUE(norm.count("twoshot-fused"));
  EXPECT_TRUE(norm.count("nccl") && norm.count("oneshot") && norm.count("rs+ag"));
  EXPECT_EQ(BuildCandidates(NormProblem(8, 4096), ctx)[0].name.ToString(), "nccl");
}

TEST(NcclChoiceSpec, RequestedChoicesAreParsedAndDefaultAdded) {
  core::Problem p = Prob(core::Op::kAllReduce);
  p.choices = {"nccl:ctas=4", "nccl:bogus=1"};
  const auto cands = BuildCandidates(p, Ctx());
  ASSERT_EQ(cands.size(), 3u);
  EXPECT_EQ(cands[0].name.ToString(), "nccl");
  EXPECT_TRUE(cands[1].applicable());
  EXPECT_FALSE(cands[2].applicable());
}

// Issue 33: choices across nodes. Names parse strictly; each says where it applies.
TEST(NcclChoiceSpec, NetworkSettingsParseIntoTheirEnvironment) {
  auto c = core::ParseChoice("nccl-net:socksPerThread=4,socketThreads=4,buffSize=8MiB", "nccl");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->ToString(), "nccl-net:buffSize=8388608,socketThreads=4,socksPerThread=4");
  auto s = SpecFromChoice(*c);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(apply::NetSettingsEnv(s->net),
            (std::vector<std::pair<std::string, std::string>>{{"NCCL_SOCKET_NTHREADS", "4"},
                                                              {"NCCL_NSOCKS_PERTHREAD", "4"},
                                                              {"NCCL_BUFFSIZE", "8388608"}}));
  EXPECT_NE(core::ParseChoice("nccl-net:socketThreads=17", "nccl")
                .status()
                .message()
                .find("socketThreads='17' must be an integer 1..16"),
            std::string::npos);
  EXPECT_NE(SpecFromChoice({"nccl-net", {{"socketThreads", "16"}, {"socksPerThread", "8"}}})
                .status()
                .message()
                .find("at most 64"),
            std::string::npos);
  EXPECT_NE(SpecFromChoice({"nccl-net", {}}).status().message().find("at least one"),
            std::string::npos);
  EXPECT_FALSE(core::ParseChoice("nccl-net:socketThreads=2", "host").ok());
}

TEST(NcclChoiceSpec, HierarchicalAllReduceParses) {
  auto c = core::ParseChoice("hier:blocks=32,threads=512", "nccl");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto s = SpecFromChoice(*c);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->compose, Composition::kHierarchical);
  EXPECT_EQ(s->blocks, 32);
  EXPECT_EQ(s->threads, 512);
  EXPECT_NE(core::ParseChoice("hier:mode=push", "nccl").status().message().find("blocks, threads"),
            std::string::npos);
  // The grid's bounds are the peer kernels' (SpecFromChoice, below core::ParseChoice's).
  EXPECT_NE(SpecFromChoice({"hier", {{"blocks", "300"}}}).status().message().find("more than 256"),
            std::string::npos);
  EXPECT_NE(
      SpecFromChoice({"hier", {{"threads", "100"}}}).status().message().find("multiple of 32"),
      std::string::npos);
}

CatalogContext Span(int nodes, int ranks_per_node, bool equal = true) {
  CatalogContext c = Ctx();
  c.world = nodes * ranks_per_node;
  c.peer_problem.clear();  // peer memory works inside the node
  c.span = {nodes, ranks_per_node, equal};
  return c;
}

TEST(NcclChoiceSpec, PeerChoicesOnlyInsideOneNode) {
  const auto p = Prob(core::Op::kAllReduce);
  EXPECT_EQ(SkipReason({"twoshot", {}}, p, Span(1, 4)), "");
  EXPECT_EQ(SkipReason({"twoshot", {}}, p, Span(2, 2)),
            "peer memory (CUDA IPC) joins the ranks of one node; these span 2 nodes");
  core::Problem fused = p;
  fused.epilogue = {core::EpilogueKind::kResidualRmsNorm, 4096, 1e-5};
  EXPECT_NE(SkipReason({"oneshot-fused", {{"mode", "ll"}}}, fused, Span(2, 2)).find("span 2"),
            std::string::npos);
  EXPECT_NE(SkipReason({"p2p", {}}, Prob(core::Op::kAllGather), Span(4, 1)).find("span 4"),
            std::string::npos);
  EXPECT_EQ(SkipReason({"nccl", {{"ctas", "8"}}}, p, Span(2, 2)), "");  // NCCL's own: anywhere
}

TEST(NcclChoiceSpec, NetworkSettingsOnlyAcrossNodes) {
  const core::ChoiceName net{"nccl-net", {{"socketThreads", "4"}, {"socksPerThread", "4"}}};
  EXPECT_EQ(SkipReason(net, Prob(core::Op::kAllReduce), Span(1, 4)),
            "network transport settings matter only across nodes (all ranks on one node)");
  // Across nodes they apply to every collective: measured by rank processes of their own.
  EXPECT_EQ(SkipReason(net, Prob(core::Op::kAllGather), Span(2, 2)), "");
  EXPECT_EQ(SkipReason(net, Prob(core::Op::kAllToAll), Span(4, 1)), "");
  // IB queue pairs only where NCCL has an IB/RoCE device.
  const core::ChoiceName qps{"nccl-net", {{"ibQps", "4"}}};
  CatalogContext no_ib = Span(2, 2);
  no_ib.ib_problem = "no IB/RoCE device";
  EXPECT_EQ(SkipReason(qps, Prob(core::Op::kAllReduce), no_ib), "ibQps: no IB/RoCE device");
  EXPECT_EQ(SkipReason(net, Prob(core::Op::kAllReduce), no_ib), "");
  CatalogContext ib = Span(2, 2);
  ib.ib_problem.clear();
  EXPECT_EQ(SkipReason(qps, Prob(core::Op::kAllReduce), ib), "");
}

// The catalog's handful of network settings, each with the environment its processes get
// and the choice they measure (core/apply/process_setting.h).
TEST(NcclChoiceSpec, CatalogOffersAHandfulOfNetworkSettings) {
  std::vector<std::string> net;
  for (const auto& c : CatalogChoices(core::Op::kAllReduce, Span(2, 2)))
    if (c.base == "nccl-net") net.push_back(c.ToString());
  EXPECT_EQ(net, (std::vector<std::string>{
                     "nccl-net:socketThreads=2,socksPerThread=2",
                     "nccl-net:socketThreads=4,socksPerThread=4",
                     "nccl-net:socketThreads=8,socksPerThread=2",
                     "nccl-net:buffSize=16777216,socketThreads=4,socksPerThread=4",
                     "nccl-net:ibQps=4",
                 }));
  for (const std::string& name : net) EXPECT_TRUE(core::ParseChoice(name, "nccl").ok()) << name;
  const auto setting = apply::ProcessSettingOf(
      {"nccl-net", {{"socketThreads", "4"}, {"socksPerThread", "4"}, {"buffSize", "16777216"}}},
      "nccl");
  ASSERT_TRUE(setting.has_value());
  EXPECT_EQ(setting->measured_as, "nccl");
  EXPECT_EQ(setting->env,
            (std::vector<std::pair<std::string, std::string>>{{"NCCL_SOCKET_NTHREADS", "4"},
                                                              {"NCCL_NSOCKS_PERTHREAD", "4"},
                                                              {"NCCL_BUFFSIZE", "16777216"}}));
  // Everything else runs in the job's own rank processes.
  EXPECT_FALSE(apply::ProcessSettingOf({"nccl", {{"ctas", "8"}}}, "nccl").has_value());
  EXPECT_FALSE(apply::ProcessSettingOf({"test-env", {}}, "nccl").has_value());
  EXPECT_EQ(apply::ProcessSettingOf({"test-env", {}}, "host")->measured_as, "ring");
  EXPECT_FALSE(apply::ProcessSettingOf({"ring", {}}, "host").has_value());
}

TEST(NcclChoiceSpec, HierarchicalAllReduceSkipReasons) {
  const core::ChoiceName hier{"hier", {}};
  const auto ar = Prob(core::Op::kAllReduce);
  EXPECT_EQ(SkipReason(hier, Prob(core::Op::kAllGather), Span(2, 2)),
            "the hierarchical path is an allReduce");
  EXPECT_EQ(SkipReason(hier, ar, Span(1, 4)),
            "one node: the hierarchical path needs ranks on several nodes");
  EXPECT_NE(SkipReason(hier, ar, Span(2, 2, false)).find("unequal ranks per node"),
            std::string::npos);
  EXPECT_NE(SkipReason(hier, ar, Span(4, 1)).find("one rank per node"), std::string::npos);
  // 3 bf16 elements over 2 nodes x 2 ranks: the count is not divisible by 2 ranks per node.
  EXPECT_EQ(SkipReason(hier, Prob(core::Op::kAllReduce, 6), Span(2, 2)),
            "element count 3 not divisible by 2 ranks per node");
  core::Problem ints = ar;
  ints.dtype = core::Dtype::kInt32;
  EXPECT_NE(SkipReason(hier, ints, Span(2, 2)).find("fp32, fp16 and bf16"), std::string::npos);
  EXPECT_EQ(SkipReason({"hier", {{"threads", "1024"}}}, ar, Span(2, 2)),
            "reducing kernels run at most 512 threads per block (registers)");
  // Our node kernels join at most 8 ranks (kernels::kMaxPeers).
  EXPECT_EQ(SkipReason({"hier", {{"threads", "32"}}}, ar, Span(2, 64)),
            "64 ranks per node: the node phases' kernels join 2 to 8 ranks");
  // Built: it runs where the span allows and the node's ranks share peer memory.
  CatalogContext ok = Span(2, 2);
  ok.node_peer_problem.clear();
  EXPECT_EQ(SkipReason(hier, ar, ok), "");
  EXPECT_EQ(SkipReason(hier, ar, Span(2, 2)),
            "peer memory unavailable inside the node: node teams not set up");
  ok.node_peer_problem = "rank 2's node: cudaIpcOpenMemHandle failed";
  EXPECT_EQ(SkipReason(hier, ar, ok),
            "peer memory unavailable inside the node: rank 2's node: cudaIpcOpenMemHandle failed");
}

TEST(NcclChoiceSpec, CatalogOffersHierOnlyForAllReduceAcrossNodes) {
  auto hiers = [](core::Op op, const CatalogContext& ctx) {
    std::vector<std::string> out;
    for (const auto& c : CatalogChoices(op, ctx)) {
      if (c.base == "hier") out.push_back(c.ToString());
    }
    return out;
  };
  EXPECT_EQ(hiers(core::Op::kAllReduce, Span(2, 2)),
            (std::vector<std::string>{"hier:blocks=16,threads=256", "hier:blocks=64,threads=256",
                                      "hier:blocks=128,threads=512"}));
  EXPECT_TRUE(hiers(core::Op::kAllReduce, Span(1, 4)).empty());  // one node: not offered
  EXPECT_TRUE(hiers(core::Op::kAllGather, Span(2, 2)).empty());
}

// staged=1 (issue 43): the pooled-only pull shapes again, for a program's own tensors.
std::vector<std::string> StagedIn(core::Op op) {
  CatalogContext ctx = Ctx();
  std::vector<std::string> out;
  for (const auto& c : CatalogChoices(op, ctx)) {
    if (c.params.count("staged")) out.push_back(c.ToString());
  }
  return out;
}

TEST(NcclChoiceSpec, CatalogOffersStagedPullShapesPerOp) {
  EXPECT_EQ(StagedIn(core::Op::kAllReduce),
            (std::vector<std::string>{
                "oneshot:blocks=32,mode=pull,staged=1,threads=256",
                "oneshot:blocks=64,mode=pull,staged=1,threads=256",
                "oneshot:blocks=128,mode=pull,staged=1,threads=256,unroll=2",
                "twoshot:blocks=32,mode=pull,staged=1,threads=256,unroll=2",
                "twoshot:blocks=64,mode=pull,staged=1,threads=256,unroll=2",
                "twoshot:blocks=128,mode=pull,staged=1,threads=256,unroll=2",
            }));
  EXPECT_EQ(StagedIn(core::Op::kReduceScatter),
            (std::vector<std::string>{
                "twoshot:blocks=32,mode=pull,staged=1,threads=256,unroll=2",
                "twoshot:blocks=64,mode=pull,staged=1,threads=256,unroll=2",
                "twoshot:blocks=128,mode=pull,staged=1,threads=256,unroll=2",
            }));
  EXPECT_EQ(StagedIn(core::Op::kAllGather),
            (std::vector<std::string>{"p2p:blocks=16,mode=pull,staged=1,threads=256",
                                      "p2p:blocks=64,mode=pull,staged=1,threads=512,unroll=2"}));
  EXPECT_TRUE(StagedIn(core::Op::kBroadcast).empty());
  EXPECT_TRUE(StagedIn(core::Op::kAllToAll).empty());
  // Each name reads back as a staged spec of its shape, and runs where peer memory does.
  CatalogContext ctx = Ctx();
  ctx.peer_problem.clear();
  for (core::Op op : {core::Op::kAllReduce, core::Op::kReduceScatter, core::Op::kAllGather}) {
    for (const std::string& name : StagedIn(op)) {
      auto parsed = core::ParseChoice(name, "nccl");
      ASSERT_TRUE(parsed.ok()) << name;
      EXPECT_EQ(parsed->ToString(), name);
      auto spec = SpecFromChoice(*parsed);
      ASSERT_TRUE(spec.ok()) << name;
      EXPECT_TRUE(spec->staged) << name;
      EXPECT_FALSE(spec->push) << name;
      EXPECT_EQ(SkipReason(*parsed, Prob(op), ctx), "") << name;
    }
  }
}

TEST(NcclChoiceSpec, StagedChoicesSkipWithTheirReasons) {
  CatalogContext ctx = Ctx();
  const core::ChoiceName one_pull{"oneshot", {{"mode", "pull"}, {"staged", "1"}}};
  EXPECT_EQ(SkipReason(one_pull, Prob(core::Op::kAllReduce), ctx),
            "peer memory unavailable: peer memory not probed");
  ctx.peer_problem.clear();
  const std::string unstaged_runs =
      "staged: this kernel runs on any buffer unstaged (only this rank's buffers and the "
      "peers' staging)";
  EXPECT_EQ(
      SkipReason({"oneshot", {{"mode", "push"}, {"staged", "1"}}}, Prob(core::Op::kAllReduce), ctx),
      unstaged_runs);
  EXPECT_EQ(SkipReason({"twoshot", {{"mode", "push"}, {"staged", "1"}}},
                       Prob(core::Op::kReduceScatter), ctx),
            unstaged_runs);
  // Two-shot push all-reduce writes the peers' outputs: staged, it copies the output out.
  EXPECT_EQ(
      SkipReason({"twoshot", {{"mode", "push"}, {"staged", "1"}}}, Prob(core::Op::kAllReduce), ctx),
      "");
  EXPECT_EQ(SkipReason(one_pull, Prob(core::Op::kAllReduce, 64 << 20), ctx),
            "one-shot moves (world-1)x the message into each rank; not tuned above 16 MiB "
            "(two-shot covers larger messages)");
  EXPECT_EQ(SkipReason(one_pull, Prob(core::Op::kAllGather), ctx), "one-shot is an allReduce");
  EXPECT_NE(
      SkipReason({"oneshot", {{"mode", "ll"}, {"staged", "1"}}}, Prob(core::Op::kAllReduce), ctx)
          .find("staged does not apply to mode=ll"),
      std::string::npos);
  EXPECT_NE(SkipReason({"p2p", {{"staged", "2"}}}, Prob(core::Op::kAllGather), ctx)
                .find("staged '2' is not one of 1"),
            std::string::npos);
  // The default leads the candidates; the staged ones follow, applicable.
  const auto cands = BuildCandidates(Prob(core::Op::kAllGather), ctx);
  ASSERT_FALSE(cands.empty());
  EXPECT_EQ(cands[0].name.ToString(), "nccl");
  int staged_ok = 0;
  for (const auto& c : cands) staged_ok += c.name.params.count("staged") && c.applicable();
  EXPECT_EQ(staged_ok, 2);
}

}  // namespace
}  // namespace ccltune::worker::nccl

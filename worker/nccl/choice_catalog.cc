// The NCCL backend's catalog of choices and their skip reasons (choice_catalog.h).
#include "worker/nccl/choice_catalog.h"

#include <cstdlib>
#include <filesystem>

#include "worker/nccl/inproc_tuner_api.h"

namespace ccltune::worker::nccl {
namespace {

core::ChoiceName Named(std::string base, std::map<std::string, std::string> params = {}) {
  return core::ChoiceName{std::move(base), std::move(params)};
}

// The peer kernels' sweep: the grids that won somewhere in a wide sweep (blocks 16-256,
// threads 256/512, pull/push, unroll 1/2; 2 and 4 H200s, graph mode, 64 KiB-64 MiB;
// tests/gpu/own_kernels_on_device.sh exploreN, tests/gpu/explore_table.py). One-shot:
// 4-64 blocks for LL's small messages; pull from 64 KiB, 32-64 blocks to 512 KiB, 128
// (unrolled) above; push lost everywhere once pull's barriers stopped fencing, two shapes
// stay. Two-shot: pull to 4 MiB (16-64 blocks at 512 KiB-2 MiB), push from 8 MiB; 512
// threads only at 16 MiB and up; unroll 2 was never slower beyond 1 MiB. 256 blocks lost
// everywhere (one wave no longer fits at 128 registers a thread).
// Staged (issue 43): the pooled-only pull shapes that won most often, again with staged=1,
// so that a program's own tensors (which reach them only through the runtime's copies into
// peer memory) get a measured time for them, copies included.
void AppendPeerCatalog(core::Op op, std::vector<core::ChoiceName>& out) {
  struct Shape {
    const char* blocks;
    const char* threads;
    const char* mode;
    const char* unroll;  // nullptr: 1 (not named)
  };
  static const Shape kOneShot[] = {{"4", "256", "ll", nullptr},    {"16", "256", "ll", nullptr},
                                   {"64", "256", "ll", nullptr},   {"32", "256", "pull", nullptr},
                                   {"64", "256", "pull", nullptr}, {"128", "256", "pull", nullptr},
                                   {"128", "256", "pull", "2"},    {"32", "256", "push", nullptr},
                                   {"128", "256", "push", "2"}};
  static const Shape kTwoShot[] = {{"16", "256", "pull", "2"},     {"32", "256", "pull", "2"},
                                   {"64", "256", "pull", nullptr}, {"64", "256", "pull", "2"},
                                   {"128", "256", "pull", "2"},    {"64", "256", "push", "2"},
                                   {"128", "256", "push", "2"},    {"128", "512", "push", "2"}};
  static const Shape kCopy[] = {{"16", "256", "pull", nullptr},
                                {"16", "256", "push", nullptr},
                                {"64", "512", "pull", "2"},
                                {"64", "512", "push", "2"}};
  static const Shape kOneShotStaged[] = {
      {"32", "256", "pull", nullptr}, {"64", "256", "pull", nullptr}, {"128", "256", "pull", "2"}};
  static const Shape kTwoShotStaged[] = {
      {"32", "256", "pull", "2"}, {"64", "256", "pull", "2"}, {"128", "256", "pull", "2"}};
  static const Shape kCopyStaged[] = {{"16", "256", "pull", nullptr}, {"64", "512", "pull", "2"}};
  auto add = [&](const char* base, const auto& shapes, bool staged) {
    for (const Shape& g : shapes) {
      std::map<std::string, std::string> p{
          {"blocks", g.blocks}, {"threads", g.threads}, {"mode", g.mode}};
      if (g.unroll != nullptr) p["unroll"] = g.unroll;
      if (staged) p["staged"] = "1";
      out.push_back(Named(base, std::move(p)));
    }
  };
  if (op == core::Op::kAllReduce) {
    add("oneshot", kOneShot, false);
    add("oneshot", kOneShotStaged, true);
  }
  if (op == core::Op::kAllReduce || op == core::Op::kReduceScatter) {
    add("twoshot", kTwoShot, false);
    add("twoshot", kTwoShotStaged, true);
  }
  if (op == core::Op::kAllGather) {
    add("p2p", kCopy, false);
    add("p2p", kCopyStaged, true);
    for (const char* mode : {"pull", "push"}) out.push_back(Named("ce", {{"mode", mode}}));
  }
}

// Fused all-reduce + epilogue: a block per row, so `blocks` is rows in flight; 512 threads
// hold a 4096-wide bf16 row one vector a thread, 256 threads two.
void AppendFusedCatalog(std::vector<core::ChoiceName>& out) {
  struct Shape {
    const char* base;
    const char* blocks;
    const char* threads;
    const char* mode;
  };
  static const Shape kFused[] = {
      {"oneshot-fused", "16", "512", "ll"},    {"oneshot-fused", "64", "512", "ll"},
      {"oneshot-fused", "32", "512", "pull"},  {"oneshot-fused", "128", "512", "pull"},
      {"oneshot-fused", "64", "256", "pull"},  {"twoshot-fused", "32", "512", "pull"},
      {"twoshot-fused", "128", "512", "pull"}, {"twoshot-fused", "64", "256", "pull"}};
  for (const Shape& g : kFused) {
    out.push_back(Named(g.base, {{"blocks", g.blocks}, {"threads", g.threads}, {"mode", g.mode}}));
  }
}

// The hierarchical all-reduce's grids for its node phases (our reduce-scatter and all-gather
// kernels, pull): the two-shot sweep's small, middle and large winners (AppendPeerCatalog).
void AppendHierCatalog(std::vector<core::ChoiceName>& out) {
  static const char* const kGrids[][2] = {{"16", "256"}, {"64", "256"}, {"128", "512"}};
  for (const auto& g : kGrids) out.push_back(Named("hier", {{"blocks", g[0]}, {"threads", g[1]}}));
}

// NCCL's network settings across nodes, each measured by rank processes of its own
// (core/apply/process_setting.h), so kept to a handful. Unset, NCCL's sockets use no helper
// threads on hosts other than AWS and GCP; 4 threads x 4 sockets ran all-reduce 4.7x faster
// at 64 MiB on two emulated nodes (torch.distributed, docs/design.md §6) and slower at 8 KiB, so
// the sweep brackets it; a larger NCCL_BUFFSIZE (4 MiB by default) gives Simple larger chunks; IB
// queue pairs apply only where IB is.
void AppendNetCatalog(std::vector<core::ChoiceName>& out) {
  static const std::map<std::string, std::string> kSettings[] = {
      {{"socketThreads", "2"}, {"socksPerThread", "2"}},
      {{"socketThreads", "4"}, {"socksPerThread", "4"}},
      {{"socketThreads", "8"}, {"socksPerThread", "2"}},
      {{"socketThreads", "4"}, {"socksPerThread", "4"}, {"buffSize", "16777216"}},
      {{"ibQps", "4"}},
  };
  for (const auto& params : kSettings) out.push_back(Named("nccl-net", params));
}

}  // namespace

std::string NetIbProblem() {
  if (const char* off = std::getenv("NCCL_IB_DISABLE"); off != nullptr && std::atoi(off) == 1)
    return "NCCL_IB_DISABLE=1";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/class/infiniband", ec)) {
    (void)entry;
    return "";
  }
  return "no IB/RoCE device (/sys/class/infiniband is empty or absent): NCCL's network is "
         "sockets";
}

std::vector<core::ChoiceName> CatalogChoices(core::Op op, const CatalogContext& ctx,
                                             bool epilogue) {
  std::vector<core::ChoiceName> out{Named("nccl")};
  if (op != core::Op::kAllToAll) {
    for (const char* algo : {"ring", "tree"}) {
      for (const char* proto : {"ll", "ll128", "simple"}) {
        out.push_back(Named("nccl", {{"algo", algo}, {"proto", proto}}));
      }
    }
  }
  for (int n : kCtasValues) out.push_back(Named("nccl", {{"ctas", std::to_string(n)}}));
  if (op == core::Op::kAllToAll) out.push_back(Named("nccl", {{"p2pchunk", "524288"}}));
  out.push_back(Named("nccl-reg"));
  out.push_back(Named("nccl-symm"));
  out.push_back(Named("rs+ag"));
  AppendPeerCatalog(op, out);
  AppendNetCatalog(out);
  if (epilogue && op == core::Op::kAllReduce) AppendFusedCatalog(out);
  if (ctx.span.nodes > 1 && op == core::Op::kAllReduce) AppendHierCatalog(out);
  if (ctx.test_choices) out.push_back(Named("test-hang"));
  if (ctx.test_choices && op == core::Op::kAllReduce) out.push_back(Named("test-absent"));
  return out;
}

std::string SkipReason(const core::ChoiceName& choice, const core::Problem& problem,
                       const CatalogContext& ctx) {
  core::Result<ChoiceSpec> spec = SpecFromChoice(choice);
  if (!spec.ok()) return spec.status().message();
  const ChoiceSpec& s = spec.value();
  // First: across nodes the reason a choice cannot apply is the span, whatever else holds.
  if (std::string why = apply::NodeSpanSkipReason(s, problem, ctx.span); !why.empty()) return why;
  if (!s.unsupported.empty()) return s.unsupported;
  if (s.net.ib_qps > 0 && !ctx.ib_problem.empty()) return "ibQps: " + ctx.ib_problem;
  const std::uint64_t count =
      core::ElementCount(problem.op, problem.dtype, problem.bytes, ctx.world);
  if (count == 0) return "message smaller than one element per rank";
  if ((s.compose == Composition::kBoundedSpin || s.absent_test) && !ctx.test_choices) {
    return "test choice; set CCLTUNE_ENABLE_TEST_CHOICES=1";
  }
  if (s.compose == Composition::kPeer) {
    if (!ctx.peer_problem.empty()) return "peer memory unavailable: " + ctx.peer_problem;
    return apply::PeerSkipReason(s, problem, ctx.world);
  }
  if (s.compose == Composition::kHierarchical && !ctx.node_peer_problem.empty()) {
    return "peer memory unavailable inside the node: " + ctx.node_peer_problem;
  }
  if (s.p2p_chunk > 0) {
    return "NCCL 2.28's ncclConfig_t has no per-communicator P2P chunk size "
           "(NCCL_P2P_*_CHUNKSIZE are read once per process)";
  }
  if (s.algo >= 0) {
    if (problem.op == core::Op::kAllToAll)
      return "allToAll runs as send/recv; NCCL's tuner is not consulted";
    if (!ctx.tuner_loaded) return "in-process tuner not loaded: " + ctx.tuner_problem;
    // NCCL runs a 1-rank collective as a local copy and never asks the tuner.
    if (ctx.world == 1) return "one rank: NCCL copies locally and picks no algorithm or protocol";
    if (s.algo == kCcltuneAlgoTree && problem.op != core::Op::kAllReduce) {
      return "NCCL implements tree for allReduce only";
    }
  }
  if (s.compose == Composition::kReduceScatterAllGather) {
    if (problem.op != core::Op::kAllReduce) return "rs+ag composes an allReduce only";
    if (count % static_cast<std::uint64_t>(ctx.world) != 0) {
      return "element count " + std::to_string(count) + " not divisible by world size " +
             std::to_string(ctx.world);
    }
  }
  if (s.buffers == BufferMode::kSymmetric && ctx.nccl_version < 22700) {
    return "symmetric windows need NCCL >= 2.27 (running " + std::to_string(ctx.nccl_version) + ")";
  }
  return "";
}

std::vector<ChoiceCandidate> BuildCandidates(const core::Problem& problem,
                                             const CatalogContext& ctx) {
  std::vector<core::ChoiceName> names;
  names.push_back(Named("nccl"));  // the default is always measured, and first
  std::vector<ChoiceCandidate> out;
  if (problem.choices.empty()) {
    for (auto& c : CatalogChoices(problem.op, ctx, !problem.epilogue.none())) {
      if (c.ToString() != "nccl") names.push_back(std::move(c));
    }
  } else {
    for (const std::string& text : problem.choices) {
      core::Result<core::ChoiceName> c = core::ParseChoice(text, "nccl");
      if (!c.ok()) {
        out.push_back({core::ChoiceName{text, {}}, c.status().message()});
        continue;
      }
      if (c.value().ToString() != "nccl") names.push_back(std::move(c).value());
    }
  }
  std::vector<ChoiceCandidate> result;
  for (auto& n : names) {
    std::string reason = SkipReason(n, problem, ctx);
    result.push_back({std::move(n), std::move(reason)});
  }
  for (auto& c : out) result.push_back(std::move(c));
  return result;
}

}  // namespace ccltune::worker::nccl

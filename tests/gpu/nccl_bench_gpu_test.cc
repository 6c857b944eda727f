// The `nccl` default choice measured through the Backend interface the way docs/design.md §2 asks
// (warm-up, rounds of barrier + timed iterations, max across ranks, median of rounds), for
// allReduce, allGather and reduceScatter in bf16 from 1 KiB to 256 MiB, eager and as CUDA
// graphs. Its table sits next to nccl-tests' in run_on_device.sh's summary, so the two
// can be compared on the same machine in the same run. Asserts only what must hold
// (every point measured, finite, positive); the numbers are the product. Skips without GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/plan/types.h"
#include "tests/gpu/file_peer_directory.h"
#include "tests/gpu/gpu_test_env.h"
#include "tests/gpu/rank_harness.h"
#include "worker/nccl/nccl_backend.h"

namespace ccltune::testing {
namespace {

constexpr int kRounds = 5;

// Median over rounds of the per-round max across ranks, in seconds per op.
core::Result<double> MeasureDefault(worker::Backend& be, const core::Problem& p,
                                    const core::BenchmarkSpec& bench) {
  CCLTUNE_ASSIGN_OR_RETURN(auto pc, be.Prepare(p, core::ChoiceName{"nccl", {}}, bench));
  CCLTUNE_RETURN_IF_ERROR(pc->Warmup(bench.warmup_iters, worker::DeadlineIn(30)));
  CCLTUNE_RETURN_IF_ERROR(pc->ReadyRounds(bench.iters, worker::DeadlineIn(30)));
  std::vector<double> rounds;
  for (int r = 0; r < kRounds; ++r) {
    CCLTUNE_RETURN_IF_ERROR(be.Barrier(worker::DeadlineIn(30)));
    CCLTUNE_ASSIGN_OR_RETURN(double t, pc->TimedRound(bench.iters, worker::DeadlineIn(30)));
    CCLTUNE_ASSIGN_OR_RETURN(auto mx, be.AllReduceMax({t}, worker::DeadlineIn(30)));
    rounds.push_back(mx[0]);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

int BenchRank(int rank, int world, const std::string& dir, bool graph) {
  FilePeerDirectory pd(dir, rank, world);
  worker::NeverCancel cancel;
  core::BenchmarkSpec bench;
  bench.warmup_iters = 5;
  bench.iters = 20;
  bench.cuda_graph = graph;
  auto be = worker::CreateNcclBackend(rank, world, rank, pd, cancel, bench);
  if (!be.ok()) return std::fprintf(stderr, "%s\n", be.status().ToString().c_str()), 2;
  std::ofstream out(dir + "/bench.rank" + std::to_string(rank));
  for (core::Op op : {core::Op::kAllReduce, core::Op::kAllGather, core::Op::kReduceScatter}) {
    for (std::uint64_t bytes = 1024; bytes <= (256ull << 20); bytes *= 2) {
      const core::Problem p{op,
                            core::Dtype::kBf16,
                            core::IsReducing(op) ? core::RedOp::kSum : core::RedOp::kNone,
                            bytes,
                            {}};
      core::Result<double> t = MeasureDefault(*be.value(), p, bench);
      if (!t.ok())
        return std::fprintf(stderr, "%s: %s\n", p.Key().c_str(), t.status().ToString().c_str()), 3;
      const double eff =
          static_cast<double>(core::EffectiveBytes(op, core::Dtype::kBf16, bytes, world));
      const double algbw = eff / t.value() / 1e9;
      char line[256];
      std::snprintf(line, sizeof(line), "| %s | %llu | %.2f | %.2f | %.2f |\n", core::OpName(op),
                    static_cast<unsigned long long>(eff), t.value() * 1e6, algbw,
                    algbw * core::BusBwFactor(op, world));
      out << line;
    }
  }
  return 0;
}

void RunBench(bool graph) {
  const int world = MultiGpuWorldOrZero();
  if (world == 0) GTEST_SKIP() << "needs >= 2 GPUs";
  GpuTestDir dir("bench");
  const auto out = RunRanks(world, dir.path(), 600,
                            [&](int r) { return BenchRank(r, world, dir.path(), graph); });
  for (const auto& o : out) ASSERT_EQ(o.exit_code, 0) << Describe(out);
  std::ifstream f(dir.path() + "/bench.rank0");
  std::string rows((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(std::count(rows.begin(), rows.end(), '\n'), 3 * 19);
  EXPECT_EQ(rows.find("nan"), std::string::npos);
  EXPECT_EQ(rows.find("inf"), std::string::npos);
  const std::string mode = graph ? "graph" : "eager";
  WriteSummary("bench-" + mode + "-" + std::to_string(world) + "gpu.md",
               "## ccltune `nccl` default, bf16, " + mode + ", " + std::to_string(world) +
                   " GPUs (median of 5 rounds of max-over-ranks, 20 ops/round)\n\n"
                   "| op | bytes | time us | algbw GB/s | busbw GB/s |\n|---|---|---|---|---|\n" +
                   rows);
  std::printf("%s", rows.c_str());
}

// A round longer than one gate holds is timed in gated chunks: its per-op time must be the
// GPU's, as for a short round, not the host's launch rate (on a non-blocking communicator
// each NCCL call starts a thread; ungated, 200 launches read 45-60 us per op at 1 MiB on a
// 2x H200 VM, against 11.6 us gated). The bound is loose on purpose: it tells the two apart.
int LongRoundRank(int rank, int world, const std::string& dir) {
  FilePeerDirectory pd(dir, rank, world);
  worker::NeverCancel cancel;
  core::BenchmarkSpec bench;
  auto be = worker::CreateNcclBackend(rank, world, rank, pd, cancel, bench);
  if (!be.ok()) return std::fprintf(stderr, "%s\n", be.status().ToString().c_str()), 2;
  const core::Problem p{core::Op::kAllGather, core::Dtype::kBf16, core::RedOp::kNone, 1 << 20, {}};
  double t[2] = {0, 0};
  const int iters[2] = {20, 200};
  for (int i = 0; i < 2; ++i) {
    bench.iters = iters[i];
    core::Result<double> r = MeasureDefault(*be.value(), p, bench);
    if (!r.ok()) return std::fprintf(stderr, "%s\n", r.status().ToString().c_str()), 3;
    t[i] = r.value();
  }
  std::printf("rank %d: allGather 1 MiB, %d ops per round %.2f us, %d ops per round %.2f us\n",
              rank, iters[0], t[0] * 1e6, iters[1], t[1] * 1e6);
  return t[1] < 1.5 * t[0] ? 0 : 4;
}

TEST(NcclBenchGpu, LongEagerRoundTimesTheGpu) {
  const int world = MultiGpuWorldOrZero();
  if (world == 0) GTEST_SKIP() << "needs >= 2 GPUs";
  GpuTestDir dir("longround");
  const auto out =
      RunRanks(world, dir.path(), 300, [&](int r) { return LongRoundRank(r, world, dir.path()); });
  for (const auto& o : out) EXPECT_EQ(o.exit_code, 0) << Describe(out);
}

TEST(NcclBenchGpu, DefaultEager) { RunBench(false); }
TEST(NcclBenchGpu, DefaultCudaGraph) { RunBench(true); }

}  // namespace
}  // namespace ccltune::testing

// Nothing hangs (docs/design.md §2): a choice that never completes on one rank (test-hang) ends in
// Timeout on every rank within the bound, Recover rebuilds the communicators and a correct
// collective follows; a peer kernel whose rank never arrives (test-absent) returns its own
// timeout within the bound and peer kernels work again afterwards; a rank that dies makes
// every survivor's call fail within the bound.
// One forked process per GPU; skips without a GPU.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "tests/gpu/file_peer_directory.h"
#include "tests/gpu/gpu_test_env.h"
#include "tests/gpu/rank_harness.h"
#include "worker/nccl/nccl_backend.h"

namespace ccltune::testing {
namespace {

constexpr double kChoiceTimeout = 5;
constexpr double kSlack = 5;  // docs/design.md §2: choiceTimeoutSeconds + 5 s

// Exit codes of a rank body, so the parent can say what went wrong where.
enum RankExit {
  kOk = 0,
  kNoBackend = 2,
  kNotTimedOut = 3,
  kTooSlow = 4,
  kRecoverFailed = 5,
  kAfterRecoverWrong = 6,
  kSurvivorSucceeded = 7
};

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

core::BenchmarkSpec Bench() {
  core::BenchmarkSpec b;
  b.choice_timeout_seconds = kChoiceTimeout;
  b.rendezvous_timeout_seconds = 60;
  return b;
}

int CorrectAllReduce(worker::Backend& be, const core::BenchmarkSpec& bench,
                     const core::ChoiceName& choice) {
  const core::Problem p{core::Op::kAllReduce, core::Dtype::kBf16, core::RedOp::kSum, 1 << 20, {}};
  auto c = be.Prepare(p, choice, bench);
  if (!c.ok())
    return std::fprintf(stderr, "prepare after recover: %s\n", c.status().ToString().c_str()), 1;
  core::Status st = c.value()->Warmup(2, worker::DeadlineIn(30));
  if (st.ok()) st = c.value()->TimedRound(5, worker::DeadlineIn(30)).status();
  if (st.ok()) st = c.value()->Verify(worker::DeadlineIn(30));
  if (!st.ok()) std::fprintf(stderr, "after recover: %s\n", st.ToString().c_str());
  return st.ok() ? 0 : 1;
}

// `choice` hangs on rank 1 (test-hang: never starts; test-absent: never joins the peer
// kernel); every rank must time out in bound, recover, and then run `after` correctly.
int HangRank(int rank, int world, const std::string& dir, const std::string& choice,
             const core::ChoiceName& after) {
  setenv("CCLTUNE_ENABLE_TEST_CHOICES", "1", 1);
  setenv("CCLTUNE_TEST_HANG_RANK", "1", 1);
  FilePeerDirectory pd(dir, rank, world);
  worker::NeverCancel cancel;
  const core::BenchmarkSpec bench = Bench();
  auto be = worker::CreateNcclBackend(rank, world, rank, pd, cancel, bench);
  if (!be.ok()) return std::fprintf(stderr, "%s\n", be.status().ToString().c_str()), kNoBackend;
  const core::Problem p{core::Op::kAllReduce, core::Dtype::kFp32, core::RedOp::kSum, 1 << 20, {}};
  const auto t0 = std::chrono::steady_clock::now();
  {
    auto c = be.value()->Prepare(p, core::ChoiceName{choice, {}}, bench);
    // Several launches: the ones queued behind a timed-out peer kernel must not each wait.
    core::Status st =
        c.ok() ? c.value()->Warmup(5, worker::DeadlineIn(kChoiceTimeout)) : c.status();
    const double took = Since(t0);
    std::printf("rank %d: %s -> %s after %.2f s\n", rank, choice.c_str(), st.ToString().c_str(),
                took);
    if (st.code() != core::StatusCode::kTimeout) return kNotTimedOut;
    if (took > kChoiceTimeout + kSlack) return kTooSlow;
  }
  core::Status rec = be.value()->Recover(1, worker::DeadlineIn(60));
  std::printf("rank %d: recover -> %s after %.2f s total\n", rank, rec.ToString().c_str(),
              Since(t0));
  if (!rec.ok()) return kRecoverFailed;
  return CorrectAllReduce(*be.value(), bench, after) == 0 ? kOk : kAfterRecoverWrong;
}

int KillRank(int rank, int world, const std::string& dir) {
  FilePeerDirectory pd(dir, rank, world);
  worker::NeverCancel cancel;
  const core::BenchmarkSpec bench = Bench();
  auto be = worker::CreateNcclBackend(rank, world, rank, pd, cancel, bench);
  if (!be.ok()) return std::fprintf(stderr, "%s\n", be.status().ToString().c_str()), kNoBackend;
  if (rank == world - 1) {
    std::printf("rank %d: dying now\n", rank);
    std::fflush(nullptr);
    raise(SIGKILL);
  }
  const core::Problem p{core::Op::kAllReduce, core::Dtype::kFp32, core::RedOp::kSum, 1 << 20, {}};
  const auto t0 = std::chrono::steady_clock::now();
  auto c = be.value()->Prepare(p, core::ChoiceName{"nccl", {}}, bench);
  core::Status st = c.ok() ? c.value()->Warmup(3, worker::DeadlineIn(kChoiceTimeout)) : c.status();
  const double took = Since(t0);
  std::printf("rank %d: with a dead peer -> %s after %.2f s\n", rank, st.ToString().c_str(), took);
  if (st.ok()) return kSurvivorSucceeded;
  return took <= kChoiceTimeout + kSlack ? kOk : kTooSlow;
}

int RequireGpus() {
  std::string why;
  const int gpus = ProbeGpuCount(&why);
  if (gpus < 2) std::printf("SKIP: needs >= 2 GPUs, found %d (%s)\n", gpus, why.c_str());
  return gpus;
}

void RunHang(const std::string& choice, const core::ChoiceName& after) {
  const int gpus = RequireGpus();
  if (gpus < 2) GTEST_SKIP() << "needs >= 2 GPUs";
  const int world = TestWorld(gpus);
  GpuTestDir dir(choice);
  const auto out = RunRanks(world, dir.path(), 120,
                            [&](int r) { return HangRank(r, world, dir.path(), choice, after); });
  std::string text = "## " + choice + " on " + std::to_string(world) + " GPUs\n\n```\n";
  for (const auto& o : out) text += o.log_tail;
  WriteSummary(choice + "-" + std::to_string(world) + "gpu.md", text + "```\n");
  for (const auto& o : out) EXPECT_EQ(o.exit_code, kOk) << Describe(out);
}

TEST(NcclFailureGpu, HangingChoiceTimesOutThenRecovers) {
  RunHang("test-hang", core::ChoiceName{"nccl", {}});
}

TEST(NcclFailureGpu, PeerKernelWithAbsentRankTimesOutThenPeerKernelsWork) {
  RunHang("test-absent",
          core::ChoiceName{"oneshot", {{"blocks", "8"}, {"threads", "256"}, {"mode", "push"}}});
}

TEST(NcclFailureGpu, KilledRankFailsSurvivorsWithinBound) {
  const int gpus = RequireGpus();
  if (gpus < 2) GTEST_SKIP() << "needs >= 2 GPUs";
  const int world = TestWorld(gpus);
  GpuTestDir dir("kill");
  const auto out =
      RunRanks(world, dir.path(), 120, [&](int r) { return KillRank(r, world, dir.path()); });
  std::string text = "## killed rank on " + std::to_string(world) + " GPUs\n\n```\n";
  for (const auto& o : out) text += o.log_tail;
  WriteSummary("kill-" + std::to_string(world) + "gpu.md", text + "```\n");
  for (int r = 0; r + 1 < world; ++r) EXPECT_EQ(out[r].exit_code, kOk) << Describe(out);
  EXPECT_EQ(out[world - 1].exit_code, 128 + SIGKILL) << Describe(out);
}

}  // namespace
}  // namespace ccltune::testing

// The all-reduce epilogues (core/kernels/epilogue_kernels.h) on one GPU, in one process:
// `world` ranks are simulated on the same device, each with its own signals, epochs,
// buffers and non-blocking stream, so every rank's fused kernel runs concurrently with
// the others' and the peer pointers are plain device pointers. Checked against the
// independent reference (LaunchEpilogueExpected) within core::VerifyTolerance:
//  - fused one-shot pull, one-shot LL, two-shot pull; world 2 and 4; bf16, fp16, fp32;
//    hidden 1032, 4096, 8192; tokens 1, 3, 32, 129; residual + RMSNorm and bias; several
//    launches in a row (epochs advance, LL parity alternates), the last one checked, and
//    every rank's output bit-identical to rank 0's;
//  - the separate LaunchEpilogue after a reference all-reduce, in place and not;
//  - a peer that never launches: the kernel returns and reports the timeout and the rank;
//    with fail_stop (the runtime's teams, issue 36) it stops the GPU context instead;
//  - argument checks (these run without a GPU);
//  - self-timing (issue 45): a late rank's delay is the others' sync wait, a full ring.
// Skips the GPU cases without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/base/deadline.h"
#include "core/gpu/timing_ring.h"
#include "core/kernels/epilogue_kernels.h"
#include "core/kernels/kernels.h"
#include "core/kernels/peer_kernels.h"
#include "core/plan/types.h"
#include "tests/gpu/sim_device.h"

namespace ccltune::testing {
namespace {

using core::Dtype;
using kernels::EpilogueOp;
using kernels::EpilogueParams;
using kernels::FusedOperands;
using kernels::PeerAlgo;
using kernels::PeerShape;
using kernels::PeerTeam;

constexpr std::uint64_t kGeneration = 7;
constexpr int kWarmLaunches = 3;  // before the checked one: epochs and LL parity move on
constexpr unsigned long long kBoundNs = 500'000'000ull;  // a hang fails in 0.5 s

struct Layout {
  int world;
  std::uint64_t tokens;
  int hidden;
  Dtype dtype;
  std::uint64_t staging_bytes;
  std::uint64_t Elements() const { return tokens * static_cast<std::uint64_t>(hidden); }
  std::uint64_t Bytes() const { return Elements() * core::DtypeSize(dtype); }
};

// One simulated rank: what a real rank maps for its peers, and its own stream.
struct SimRank {
  DeviceMem signals, epochs, in, out, residual, staging;
  HostMem timed_out;
  Stream stream;
};

// `world` ranks on this GPU and the team and operands each one launches with.
class SimWorld {
 public:
  explicit SimWorld(const Layout& l) : l_(l), ranks_(static_cast<std::size_t>(l.world)) {
    ok_ = Allocate();
  }
  bool ok() const { return ok_; }
  const Layout& layout() const { return l_; }
  SimRank& rank(int r) { return ranks_[static_cast<std::size_t>(r)]; }
  const void* weight() const { return weight_.get(); }

  PeerTeam Team(int r, unsigned long long bound_ns) {
    PeerTeam t = SimTeam(ranks_, r, bound_ns);
    t.fail_stop = fail_stop_ ? 1 : 0;
    return t;
  }
  void SetFailStop(bool on) { fail_stop_ = on; }

  FusedOperands Operands() {
    FusedOperands ops;
    for (int q = 0; q < l_.world; ++q) {
      ops.in[q] = rank(q).in.get();
      ops.out[q] = rank(q).out.get();
      ops.residual[q] = rank(q).residual.get();
      ops.staging[q] = rank(q).staging.get();
    }
    return ops;
  }

  // Inputs as rank r, residual and weight as their fill ranks; synchronous.
  cudaError_t Fill() {
    const std::uint64_t n = l_.Elements();
    cudaError_t e =
        kernels::LaunchRandomFill(weight_.get(), static_cast<std::uint64_t>(l_.hidden), l_.dtype,
                                  kernels::kWeightFillRank, kGeneration, 0, nullptr);
    for (int r = 0; r < l_.world && e == cudaSuccess; ++r) {
      e = kernels::LaunchRandomFill(rank(r).in.get(), n, l_.dtype, r, kGeneration, 0, nullptr);
    }
    return e == cudaSuccess ? RefillResidual() : e;
  }

  // Every rank's residual back to the reference's (the epilogue updates it in place).
  cudaError_t RefillResidual() {
    cudaError_t e = cudaSuccess;
    for (int r = 0; r < l_.world && e == cudaSuccess; ++r) {
      e = kernels::LaunchRandomFill(rank(r).residual.get(), l_.Elements(), l_.dtype,
                                    kernels::kResidualFillRank, kGeneration, 0, nullptr);
    }
    return e == cudaSuccess ? cudaDeviceSynchronize() : e;
  }

 private:
  bool Allocate() {
    weight_ = Zeroed(static_cast<std::uint64_t>(l_.hidden) * core::DtypeSize(l_.dtype));
    bool ok = weight_ != nullptr;
    for (auto& r : ranks_) {
      r.signals = Zeroed(sizeof(kernels::PeerSignals));
      r.epochs = Zeroed(sizeof(unsigned int) * kernels::kEpochWords);
      r.in = Zeroed(l_.Bytes());
      r.out = Zeroed(l_.Bytes());
      r.residual = Zeroed(l_.Bytes());
      r.staging = Zeroed(l_.staging_bytes);
      r.timed_out = Mapped(sizeof(int) * kernels::kTimedOutWords);
      r.stream = NonBlockingStream();
      ok = ok && r.stream && r.signals && r.epochs && r.in && r.out && r.residual && r.timed_out &&
           (l_.staging_bytes == 0 || r.staging);
    }
    return ok;
  }

  Layout l_;
  std::vector<SimRank> ranks_;
  DeviceMem weight_;
  bool ok_ = false;
  bool fail_stop_ = false;
};

// What every rank must hold, from the reference.
struct Wanted {
  DeviceMem out, residual;
};

cudaError_t Reference(const EpilogueParams& p, const Layout& l, Wanted* w) {
  w->out = Zeroed(l.Bytes());
  w->residual = Zeroed(l.Bytes());
  if (!w->out || !w->residual) return cudaErrorMemoryAllocation;
  const cudaError_t e = kernels::LaunchEpilogueExpected(
      p, w->out.get(), w->residual.get(), l.tokens, l.world, kGeneration, l.dtype, nullptr);
  return e == cudaSuccess ? cudaDeviceSynchronize() : e;
}

struct FusedCase {
  const char* name;  // of the algorithm
  PeerAlgo algo;
  bool ll;
  int world;
  Dtype dtype;
  int hidden;
  std::uint64_t tokens;
  EpilogueOp op;
};

std::string CaseName(const ::testing::TestParamInfo<FusedCase>& info) {
  const FusedCase& c = info.param;
  return std::string(c.name) + "_w" + std::to_string(c.world) + "_" + core::DtypeName(c.dtype) +
         "_h" + std::to_string(c.hidden) + "_t" + std::to_string(c.tokens) +
         (c.op == EpilogueOp::kBias ? "_bias" : "_rmsnorm");
}

// The fewest threads that hold the row for odd token counts, 512 for even ones, so both
// a thread with several vectors and a thread with some past the row's end are covered.
PeerShape ShapeFor(const FusedCase& c) {
  PeerShape s;
  s.blocks = 8;
  s.ll = c.ll;
  const int fewest = (c.hidden + 32 * 32 - 1) / (32 * 32) * 32;
  s.threads = c.tokens % 2 == 0 ? 512 : (fewest < 64 ? 64 : fewest);
  return s;
}

EpilogueParams ParamsFor(EpilogueOp op, int hidden, const void* weight) {
  EpilogueParams p;
  p.op = op;
  p.hidden = hidden;
  p.weight = weight;
  return p;
}

// One launch on every rank in [0, launched), each on its own stream; then waits.
cudaError_t LaunchAll(SimWorld& w, const FusedCase& c, const PeerShape& shape,
                      const EpilogueParams& p, int launched, unsigned long long bound_ns) {
  const FusedOperands ops = w.Operands();
  for (int r = 0; r < launched; ++r) {
    const cudaError_t e = kernels::LaunchFusedAllReduce(c.algo, w.Team(r, bound_ns), ops, c.tokens,
                                                        p, c.dtype, shape, w.rank(r).stream.get());
    if (e != cudaSuccess) return e;
  }
  return cudaDeviceSynchronize();
}

class FusedEpilogueTest : public GpuParamTest<FusedCase> {};

// Each rank's out (and residual) against the reference, and bit-identical to rank 0's.
void ExpectEveryRankRight(SimWorld& w, const Wanted& want, EpilogueOp op) {
  const Layout& l = w.layout();
  const double tol = core::VerifyTolerance(l.dtype);
  for (int r = 0; r < l.world; ++r) {
    SimRank& k = w.rank(r);
    EXPECT_EQ(0, *static_cast<int*>(k.timed_out.get())) << "rank " << r << " timed out";
    EXPECT_EQ("", Differs(k.out.get(), want.out.get(), l.Elements(), l.dtype, tol, l.hidden))
        << "out of rank " << r;
    if (op == EpilogueOp::kResidualRmsNorm) {
      EXPECT_EQ(
          "", Differs(k.residual.get(), want.residual.get(), l.Elements(), l.dtype, tol, l.hidden))
          << "residual of rank " << r;
    }
    EXPECT_EQ("", Differs(k.out.get(), w.rank(0).out.get(), l.Elements(), l.dtype, 0.0, l.hidden))
        << "out of rank " << r << " is not bit-identical to rank 0's";
  }
}

TEST_P(FusedEpilogueTest, MatchesReferenceOnEveryRank) {
  const FusedCase& c = GetParam();
  const PeerShape shape = ShapeFor(c);
  const Layout l{c.world, c.tokens, c.hidden, c.dtype,
                 kernels::FusedStagingBytes(c.algo, shape, c.tokens, c.hidden, c.dtype, c.world)};
  SimWorld w(l);
  ASSERT_TRUE(w.ok()) << "allocation failed";
  CUDA_ASSERT(w.Fill());
  const EpilogueParams p = ParamsFor(c.op, c.hidden, w.weight());
  for (int i = 0; i < kWarmLaunches; ++i) CUDA_ASSERT(LaunchAll(w, c, shape, p, c.world, kBoundNs));
  CUDA_ASSERT(w.RefillResidual());
  CUDA_ASSERT(LaunchAll(w, c, shape, p, c.world, kBoundNs));
  Wanted want;
  CUDA_ASSERT(Reference(p, l, &want));
  ExpectEveryRankRight(w, want, c.op);
}

std::vector<FusedCase> AllFusedCases() {
  struct Algo {
    const char* name;
    PeerAlgo algo;
    bool ll;
  };
  const Algo algos[] = {{"OneShotPull", PeerAlgo::kOneShot, false},
                        {"OneShotLL", PeerAlgo::kOneShot, true},
                        {"TwoShotPull", PeerAlgo::kTwoShot, false}};
  std::vector<FusedCase> cases;
  for (const Algo& a : algos) {
    for (int world : {2, 4}) {
      for (Dtype d : {Dtype::kBf16, Dtype::kFp16, Dtype::kFp32}) {
        for (int hidden : {1032, 4096, 8192}) {
          for (std::uint64_t tokens : {1u, 3u, 32u, 129u}) {
            for (EpilogueOp op : {EpilogueOp::kResidualRmsNorm, EpilogueOp::kBias}) {
              cases.push_back({a.name, a.algo, a.ll, world, d, hidden, tokens, op});
            }
          }
        }
      }
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Fused, FusedEpilogueTest, ::testing::ValuesIn(AllFusedCases()), CaseName);

// A peer that never launches: the kernel gives up after the bound and says so, and the
// launch behind it returns at once (the poisoned epochs).
class FusedTimeoutTest : public GpuParamTest<bool> {};

TEST_P(FusedTimeoutTest, MissingPeerTimesOut) {
  const FusedCase c{"", PeerAlgo::kOneShot,          GetParam(), 2, Dtype::kBf16, 4096,
                    3,  EpilogueOp::kResidualRmsNorm};
  const PeerShape shape = ShapeFor(c);
  const Layout l{c.world, c.tokens, c.hidden, c.dtype,
                 kernels::FusedStagingBytes(c.algo, shape, c.tokens, c.hidden, c.dtype, c.world)};
  SimWorld w(l);
  ASSERT_TRUE(w.ok()) << "allocation failed";
  CUDA_ASSERT(w.Fill());
  const EpilogueParams p = ParamsFor(c.op, c.hidden, w.weight());
  CUDA_ASSERT(LaunchAll(w, c, shape, p, /*launched=*/1, 50'000'000ull));
  const int* words = static_cast<int*>(w.rank(0).timed_out.get());
  EXPECT_EQ(1, words[0]);
  EXPECT_EQ(0, words[1 + 0]);
  EXPECT_EQ(1, words[1 + 1]) << "rank 1, the one that never launched, is not named";
  CUDA_ASSERT(LaunchAll(w, c, shape, p, /*launched=*/1, 50'000'000ull));
}

// The body of FailStopTrapsAndNamesTheMissingRank, in a fresh child process (the trap ends
// its CUDA context): exits 0 when the launch's synchronisation failed, a later CUDA call
// failed too, and the host-mapped words (plain host memory) still name rank 1.
[[noreturn]] void FailStopChild(bool ll) {
  const FusedCase c{"", PeerAlgo::kOneShot,          ll, 2, Dtype::kBf16, 4096,
                    3,  EpilogueOp::kResidualRmsNorm};
  const PeerShape shape = ShapeFor(c);
  const Layout l{c.world, c.tokens, c.hidden, c.dtype,
                 kernels::FusedStagingBytes(c.algo, shape, c.tokens, c.hidden, c.dtype, c.world)};
  SimWorld w(l);
  if (!w.ok() || w.Fill() != cudaSuccess) {
    std::fprintf(stderr, "setup failed\n");
    std::_Exit(2);
  }
  w.SetFailStop(true);
  const EpilogueParams p = ParamsFor(c.op, c.hidden, w.weight());
  const cudaError_t first = LaunchAll(w, c, shape, p, /*launched=*/1, 50'000'000ull);
  const cudaError_t later = cudaMemset(w.rank(0).out.get(), 0, 16);
  const int* words = static_cast<int*>(w.rank(0).timed_out.get());
  std::fprintf(stderr, "launch+sync: %s, later: %s, words %d %d %d\n", cudaGetErrorName(first),
               cudaGetErrorName(later), words[0], words[1], words[2]);
  const bool stopped = first != cudaSuccess && later != cudaSuccess;
  std::_Exit(stopped && words[0] == 1 && words[1] == 0 && words[2] == 1 ? 0 : 1);
}

TEST_P(FusedTimeoutTest, FailStopTrapsAndNamesTheMissingRank) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: no CUDA across fork
  EXPECT_EXIT(FailStopChild(GetParam()), ::testing::ExitedWithCode(0),
              "launch\\+sync: cuda.*words 1 0 1");
}

INSTANTIATE_TEST_SUITE_P(Fused, FusedTimeoutTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return std::string(i.param ? "OneShotLL" : "OneShotPull");
                         });

struct SeparateCase {
  Dtype dtype;
  int hidden;
  std::uint64_t tokens;
  EpilogueOp op;
  bool in_place;  // out aliases the all-reduce's output
};

std::string SeparateName(const ::testing::TestParamInfo<SeparateCase>& info) {
  const SeparateCase& c = info.param;
  return std::string(core::DtypeName(c.dtype)) + "_h" + std::to_string(c.hidden) + "_t" +
         std::to_string(c.tokens) + (c.op == EpilogueOp::kBias ? "_bias" : "_rmsnorm") +
         (c.in_place ? "_inplace" : "");
}

class SeparateEpilogueTest : public GpuParamTest<SeparateCase> {};

// The unfused path: the reference all-reduce of 2 ranks, then LaunchEpilogue.
TEST_P(SeparateEpilogueTest, MatchesReference) {
  const SeparateCase& c = GetParam();
  const Layout l{2, c.tokens, c.hidden, c.dtype, 0};
  SimWorld w(l);  // rank 0's buffers: in holds the reduced sum, out and residual as named
  ASSERT_TRUE(w.ok()) << "allocation failed";
  CUDA_ASSERT(w.Fill());
  SimRank& k = w.rank(0);
  CUDA_ASSERT(kernels::LaunchExpected(k.in.get(), core::Op::kAllReduce, core::RedOp::kSum, c.dtype,
                                      l.Elements(), l.world, 0, kGeneration, nullptr));
  void* out = c.in_place ? k.in.get() : k.out.get();
  const EpilogueParams p = ParamsFor(c.op, c.hidden, w.weight());
  CUDA_ASSERT(
      kernels::LaunchEpilogue(p, k.in.get(), k.residual.get(), out, c.tokens, c.dtype, nullptr));
  CUDA_ASSERT(cudaDeviceSynchronize());
  Wanted want;
  CUDA_ASSERT(Reference(p, l, &want));
  const double tol = core::VerifyTolerance(c.dtype);
  EXPECT_EQ("", Differs(out, want.out.get(), l.Elements(), c.dtype, tol, c.hidden));
  if (c.op == EpilogueOp::kResidualRmsNorm) {
    EXPECT_EQ("",
              Differs(k.residual.get(), want.residual.get(), l.Elements(), c.dtype, tol, c.hidden));
  }
}

std::vector<SeparateCase> AllSeparateCases() {
  std::vector<SeparateCase> cases;
  for (Dtype d : {Dtype::kBf16, Dtype::kFp16, Dtype::kFp32}) {
    for (int hidden : {1032, 4096, 8192, 16384}) {
      for (std::uint64_t tokens : {1u, 3u, 129u}) {
        for (EpilogueOp op : {EpilogueOp::kResidualRmsNorm, EpilogueOp::kBias}) {
          for (bool in_place : {false, true}) cases.push_back({d, hidden, tokens, op, in_place});
        }
      }
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Separate, SeparateEpilogueTest, ::testing::ValuesIn(AllSeparateCases()),
                         SeparateName);

// Argument checks return before touching the GPU: these run everywhere.
FusedOperands FakeOperands(int world, std::uintptr_t misalign) {
  FusedOperands ops;
  for (int r = 0; r < world; ++r) {
    const std::uintptr_t base = 0x100000u * static_cast<std::uintptr_t>(r + 1);
    ops.in[r] = reinterpret_cast<const void*>(base + misalign);
    ops.out[r] = reinterpret_cast<void*>(base + 0x10000u);
    ops.residual[r] = reinterpret_cast<void*>(base + 0x20000u);
    ops.staging[r] = reinterpret_cast<void*>(base + 0x30000u);
  }
  return ops;
}

cudaError_t FakeLaunch(PeerAlgo algo, bool push, bool ll, int hidden, int threads,
                       std::uintptr_t misalign = 0) {
  PeerTeam team;
  team.world = 2;
  PeerShape shape;
  shape.push = push;
  shape.ll = ll;
  shape.threads = threads;
  const EpilogueParams p =
      ParamsFor(EpilogueOp::kResidualRmsNorm, hidden, reinterpret_cast<const void*>(0x900000u));
  return kernels::LaunchFusedAllReduce(algo, team, FakeOperands(2, misalign), /*tokens=*/0, p,
                                       Dtype::kBf16, shape, nullptr);
}

TEST(FusedEpilogueArgs, RejectsWhatItDoesNotImplement) {
  EXPECT_EQ(cudaErrorInvalidValue, FakeLaunch(PeerAlgo::kTwoShot, true, false, 4096, 512));
  EXPECT_EQ(cudaErrorInvalidValue, FakeLaunch(PeerAlgo::kTwoShot, false, true, 4096, 512));
  EXPECT_EQ(cudaErrorInvalidValue, FakeLaunch(PeerAlgo::kOneShot, true, false, 4096, 512));
  EXPECT_EQ(cudaErrorInvalidValue, FakeLaunch(PeerAlgo::kReduceScatter, false, false, 4096, 512));
  EXPECT_EQ(cudaErrorInvalidValue, FakeLaunch(PeerAlgo::kOneShot, false, false, 1028, 512));
  EXPECT_EQ(cudaErrorInvalidValue, FakeLaunch(PeerAlgo::kOneShot, false, false, 16392, 512));
  // A row of 8192 needs 256 threads (32 fp32 values each).
  EXPECT_EQ(cudaErrorInvalidValue, FakeLaunch(PeerAlgo::kOneShot, false, false, 8192, 128));
  EXPECT_EQ(cudaErrorMisalignedAddress, FakeLaunch(PeerAlgo::kOneShot, false, false, 4096, 512, 8));
  // Valid, and nothing to do for 0 tokens.
  EXPECT_EQ(cudaSuccess, FakeLaunch(PeerAlgo::kOneShot, false, false, 8192, 256));
  EXPECT_EQ(cudaSuccess, FakeLaunch(PeerAlgo::kOneShot, false, true, 16384, 512));
  EXPECT_EQ(cudaSuccess, FakeLaunch(PeerAlgo::kTwoShot, false, false, 4096, 128));
}

TEST(FusedEpilogueArgs, StagingOnlyForLL) {
  PeerShape shape;
  EXPECT_EQ(0u, kernels::FusedStagingBytes(PeerAlgo::kOneShot, shape, 3, 4096, Dtype::kBf16, 4));
  EXPECT_EQ(0u, kernels::FusedStagingBytes(PeerAlgo::kTwoShot, shape, 3, 4096, Dtype::kBf16, 4));
  shape.ll = true;
  // 2 parities x 4 slots x (3 x 4096 x 2 bytes / 8 data bytes per line) x 16 bytes.
  EXPECT_EQ(2u * 4 * 3072 * 16,
            kernels::FusedStagingBytes(PeerAlgo::kOneShot, shape, 3, 4096, Dtype::kBf16, 4));
}

// Self-timing (issue 45, peer_kernels.h TimingRing): the fused kernels' records, drained by
// gpu::TimingRingReader. Rank 1 starts each launch kDelayNs late (a bounded spin on its
// stream first), so rank 0's sync wait is that delay and rank 1's nearly nothing; one
// record per launch, in launch order, each naming its launch's site.
class SelfTimingTest : public GpuParamTest<bool> {};

struct TimedWorld {
  FusedCase c;
  PeerShape shape;
  SimWorld w;
  EpilogueParams p;
  std::vector<std::unique_ptr<gpu::TimingRingReader>> rings;
  explicit TimedWorld(bool ll)
      : c{"", PeerAlgo::kOneShot, ll, 2, Dtype::kBf16, 4096, 3, EpilogueOp::kResidualRmsNorm},
        shape(ShapeFor(c)),
        w(Layout{c.world, c.tokens, c.hidden, c.dtype,
                 kernels::FusedStagingBytes(c.algo, shape, c.tokens, c.hidden, c.dtype, c.world)}) {
    p = ParamsFor(c.op, c.hidden, w.weight());
    for (int r = 0; r < c.world; ++r) {
      auto ring = gpu::TimingRingReader::Create();
      rings.push_back(ring.ok() ? std::move(ring).value() : nullptr);
    }
  }
  // Also loads the spin kernel: with lazy module loading, loading it while rank 0's kernel
  // already waits for rank 1 would stall rank 1 past the bound.
  bool ok() {
    HostMem flag = Mapped(sizeof(int) * 2);
    return w.ok() && w.Fill() == cudaSuccess && rings[0] && rings[1] && flag &&
           kernels::LaunchBoundedSpin(static_cast<int*>(flag.get()), 1000,
                                      static_cast<int*>(flag.get()) + 1, nullptr) == cudaSuccess &&
           cudaDeviceSynchronize() == cudaSuccess;
  }
  // Launch `site` on both ranks, rank 1 after a spin of `delay_ns` on its stream.
  cudaError_t Launch(unsigned int site, std::uint64_t delay_ns, const int* never, int* spun) {
    for (int r = 0; r < c.world; ++r) {
      PeerTeam team = w.Team(r, kBoundNs);
      team.timing = rings[static_cast<std::size_t>(r)]->ring();
      team.site = site;
      cudaStream_t s = w.rank(r).stream.get();
      if (r == 1 && delay_ns > 0) {
        const cudaError_t e = kernels::LaunchBoundedSpin(never, delay_ns, spun, s);
        if (e != cudaSuccess) return e;
      }
      const cudaError_t e =
          kernels::LaunchFusedAllReduce(c.algo, team, w.Operands(), c.tokens, p, c.dtype, shape, s);
      if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
  }
};

TEST_P(SelfTimingTest, SyncWaitIsTheLateRanksDelay) {
  constexpr std::uint64_t kDelayNs = 200'000;
  constexpr unsigned int kLaunches = 6, kFirstSite = 40;
  TimedWorld t(GetParam());
  ASSERT_TRUE(t.ok()) << "allocation failed";
  HostMem never = Mapped(sizeof(int)), spun = Mapped(sizeof(int));
  for (unsigned int i = 0; i < kLaunches; ++i) {
    CUDA_ASSERT(t.Launch(kFirstSite + i, kDelayNs, static_cast<int*>(never.get()),
                         static_cast<int*>(spun.get())));
  }
  CUDA_ASSERT(cudaDeviceSynchronize());
  for (int r = 0; r < 2; ++r) {
    auto d = t.rings[static_cast<std::size_t>(r)]->Drain(core::DeadlineIn(5));
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(0u, d->lost);
    ASSERT_EQ(kLaunches, d->records.size()) << "rank " << r;
    for (unsigned int i = 0; i < kLaunches; ++i) {
      const gpu::TimingRingReader::Launch& rec = d->records[i];
      EXPECT_EQ(kFirstSite + i, rec.site);
      EXPECT_EQ(static_cast<unsigned int>(t.shape.blocks), rec.blocks);
      ASSERT_LE(rec.entry, rec.arrival) << "rank " << r << " launch " << i;
      ASSERT_LE(rec.arrival, rec.finish) << "rank " << r << " launch " << i;
      const double wait = static_cast<double>(rec.arrival - rec.entry);
      if (i == 0) continue;  // the first launch also waits for the other's first start
      if (r == 0) {
        EXPECT_NEAR(wait, kDelayNs, 0.1 * kDelayNs + 5000) << "launch " << i;
      } else {
        EXPECT_LT(wait, 5000) << "the late rank waited, launch " << i;
      }
    }
  }
}

// A ring nobody drains keeps the newest kTimingRecords launches and counts the rest lost.
TEST_P(SelfTimingTest, FullRingKeepsTheNewestAndCountsTheLost) {
  constexpr unsigned int kExtra = 100;
  const auto total = static_cast<unsigned int>(kernels::kTimingRecords) + kExtra;
  TimedWorld t(GetParam());
  ASSERT_TRUE(t.ok()) << "allocation failed";
  for (unsigned int i = 0; i < total; ++i) CUDA_ASSERT(t.Launch(i, 0, nullptr, nullptr));
  CUDA_ASSERT(cudaDeviceSynchronize());
  auto d = t.rings[0]->Drain(core::DeadlineIn(5));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(kExtra, d->lost);
  ASSERT_EQ(kernels::kTimingRecords, d->records.size());
  EXPECT_EQ(kExtra, d->records.front().site);
  EXPECT_EQ(total - 1, d->records.back().site);
  auto again = t.rings[0]->Drain(core::DeadlineIn(5));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->records.empty());
  EXPECT_EQ(0u, again->lost);
}

INSTANTIATE_TEST_SUITE_P(Fused, SelfTimingTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? std::string("ll") : std::string("pull");
                         });

}  // namespace
}  // namespace ccltune::testing

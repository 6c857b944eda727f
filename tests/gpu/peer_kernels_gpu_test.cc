// The peer kernels (core/kernels/peer_kernels.h) on one GPU, in one process: `world` ranks are
// simulated on the same device, each with its own signals, epochs, buffers and non-blocking stream,
// so every rank's kernel runs concurrently with the others' and the peer pointers are plain device
// pointers. Each case runs a few launches (epochs and the staging parity move on), refills the
// inputs, runs the checked launch, and compares every rank's output with the independent reference
// (LaunchExpected) within core::VerifyTolerance; all-reduce outputs must also be bit-identical to
// rank 0's. Covers one-shot (pull, push, LL, pull in place), two-shot (pull, push), the reduce-
// scatter half (pull, push), the all-gather (pull, push), and every pull kernel staged inside its
// launch (the all-reduces with a slot no rank vouches for; the program's buffers in place, apart,
// and not 16-byte aligned); worlds 2, 3 and 4; fp32, bf16 and fp16; sum, max, min and avg (sum
// kernels whose stores are scaled by 1/world); counts of whole vectors and an odd one. Multi-GPU
// runs (nccl_choices_gpu_test) check the same kernels over NVLink against NCCL; this one needs a
// single GPU. Skips without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/kernels/kernels.h"
#include "core/kernels/peer_kernels.h"
#include "core/plan/types.h"
#include "tests/gpu/sim_device.h"

namespace ccltune::testing {
namespace {

using core::Dtype;
using core::RedOp;
using kernels::PeerAlgo;
using kernels::PeerOperands;
using kernels::PeerShape;
using kernels::PeerTeam;

constexpr std::uint64_t kGeneration = 11;
constexpr int kWarmLaunches = 3;
constexpr unsigned long long kBoundNs = 500'000'000ull;  // a hang fails in 0.5 s
constexpr std::uint64_t kPadBytes = 256;                 // LL reads whole lines past a slice's end

struct Variant {
  const char* name;
  PeerAlgo algo;
  bool push;
  bool ll;
  bool in_place;
  int unroll;
  // Staged in the kernel (apply::StagesInKernel): the program's own buffers, a slot no rank
  // vouches for, and the peer buffers as the staging; `own_offset` elements past an
  // allocation's start (1: not 16-byte aligned).
  bool in_kernel = false;
  int own_offset = 0;
};

constexpr Variant kVariants[] = {
    {"oneshot_pull", PeerAlgo::kOneShot, false, false, false, 2},
    {"oneshot_push", PeerAlgo::kOneShot, true, false, false, 1},
    {"oneshot_ll", PeerAlgo::kOneShot, true, true, false, 1},
    {"oneshot_pull_inplace", PeerAlgo::kOneShot, false, false, true, 1},
    {"twoshot_pull", PeerAlgo::kTwoShot, false, false, false, 2},
    {"twoshot_push", PeerAlgo::kTwoShot, true, false, false, 1},
    {"reducescatter_pull", PeerAlgo::kReduceScatter, false, false, false, 1},
    {"reducescatter_push", PeerAlgo::kReduceScatter, true, false, false, 2},
    {"oneshot_staged", PeerAlgo::kOneShot, false, false, false, 2, true},
    {"oneshot_staged_inplace", PeerAlgo::kOneShot, false, false, true, 1, true},
    {"oneshot_staged_unaligned", PeerAlgo::kOneShot, false, false, false, 2, true, 1},
    {"twoshot_staged", PeerAlgo::kTwoShot, false, false, false, 2, true},
    {"twoshot_staged_inplace", PeerAlgo::kTwoShot, false, false, true, 1, true},
    {"twoshot_staged_unaligned", PeerAlgo::kTwoShot, false, false, false, 1, true, 1},
    {"reducescatter_staged", PeerAlgo::kReduceScatter, false, false, false, 2, true},
    {"reducescatter_staged_inplace", PeerAlgo::kReduceScatter, false, false, true, 1, true},
    {"reducescatter_staged_unaligned", PeerAlgo::kReduceScatter, false, false, false, 1, true, 1},
    {"allgather_pull", PeerAlgo::kAllGather, false, false, false, 2},
    {"allgather_push", PeerAlgo::kAllGather, true, false, false, 1},
    {"allgather_staged", PeerAlgo::kAllGather, false, false, false, 2, true},
    {"allgather_staged_inplace", PeerAlgo::kAllGather, false, false, true, 1, true},
    {"allgather_staged_unaligned", PeerAlgo::kAllGather, false, false, false, 1, true, 1},
};

struct PeerCase {
  Variant v;
  int world;
  Dtype dtype;
  RedOp redop;
  std::uint64_t count;  // core::ElementCount: all-reduce's elements, reduce-scatter's per rank
  core::Op op() const {
    switch (v.algo) {
      case PeerAlgo::kReduceScatter:
        return core::Op::kReduceScatter;
      case PeerAlgo::kAllGather:
        return core::Op::kAllGather;
      default:
        return core::Op::kAllReduce;
    }
  }
  // The all-reduces stage in the kernel through direct mode's kernels and a slot.
  bool slot() const { return v.in_kernel && op() == core::Op::kAllReduce; }
};

std::string CaseName(const ::testing::TestParamInfo<PeerCase>& info) {
  const PeerCase& c = info.param;
  return std::string(c.v.name) + "_w" + std::to_string(c.world) + "_" + core::DtypeName(c.dtype) +
         "_" + core::RedOpName(c.redop) + "_n" + std::to_string(c.count);
}

std::vector<PeerCase> AllCases() {
  std::vector<PeerCase> out;
  for (const Variant& v : kVariants) {
    for (int world : {2, 3, 4}) {
      for (Dtype d : {Dtype::kFp32, Dtype::kBf16, Dtype::kFp16}) {
        const bool gathers = v.algo == PeerAlgo::kAllGather;
        for (RedOp r :
             gathers ? std::vector<RedOp>{RedOp::kNone}
                     : std::vector<RedOp>{RedOp::kSum, RedOp::kMax, RedOp::kMin, RedOp::kAvg}) {
          // Whole 16-byte vectors, and an odd count (a tail; reduce-scatter's segments then
          // start unaligned, so it takes the element-wise path).
          for (std::uint64_t n : {4096, 12296, 1003}) out.push_back({v, world, d, r, n});
        }
      }
    }
  }
  return out;
}

// One simulated rank's memory and stream: the peer buffers (in, out, staging) and, for
// in-kernel staging, the program's own (own_in, own_out).
struct SimRank {
  DeviceMem signals, epochs, in, out, staging, own_in, own_out, want;
  HostMem timed_out;
  Stream stream;
};

class SimWorld {
 public:
  explicit SimWorld(const PeerCase& c) : c_(c), ranks_(static_cast<std::size_t>(c.world)) {
    shape_.blocks = 8;
    shape_.threads = 512;
    shape_.push = c.v.push;
    shape_.ll = c.v.ll;
    shape_.unroll = c.v.unroll;
    ok_ = Allocate();
  }
  bool ok() const { return ok_; }
  SimRank& rank(int r) { return ranks_[static_cast<std::size_t>(r)]; }
  std::uint64_t SendElements() const { return kernels::SendElements(c_.op(), c_.count, c_.world); }
  std::uint64_t RecvElements() const { return kernels::RecvElements(c_.op(), c_.count, c_.world); }

  // Every rank's input from LaunchRandomFill as that rank; synchronous.
  cudaError_t Fill() {
    cudaError_t e = cudaSuccess;
    for (int r = 0; r < c_.world && e == cudaSuccess; ++r) {
      e = kernels::LaunchRandomFill(Input(r), SendElements(), c_.dtype, r, kGeneration, 0, nullptr);
    }
    return e == cudaSuccess ? cudaDeviceSynchronize() : e;
  }

  // One launch on every rank, each on its own stream; then waits.
  cudaError_t LaunchAll() {
    PeerOperands ops;
    for (int q = 0; q < c_.world; ++q) {
      ops.in[q] = rank(q).in.get();
      ops.out[q] = c_.v.in_place && !c_.v.in_kernel ? rank(q).in.get() : rank(q).out.get();
      ops.staging[q] = rank(q).staging.get();
    }
    for (int r = 0; r < c_.world; ++r) {
      PeerOperands mine = ops;
      if (c_.slot()) {
        mine.direct = static_cast<const kernels::DirectSlot*>(unvouched_.get());
        mine.own_out = Output(r);
      } else if (c_.v.in_kernel) {
        mine.out[r] = Output(r);  // only this rank writes it
      }
      if (c_.v.in_kernel) mine.own_in = Input(r);
      const cudaError_t e = kernels::LaunchPeerCollective(
          c_.v.algo, Team(r), mine, c_.count, c_.dtype, c_.redop, shape_, rank(r).stream.get());
      if (e != cudaSuccess) return e;
    }
    return cudaDeviceSynchronize();
  }

  // Each rank's expected output, from the reference.
  cudaError_t Reference() {
    cudaError_t e = cudaSuccess;
    for (int r = 0; r < c_.world && e == cudaSuccess; ++r) {
      e = kernels::LaunchExpected(rank(r).want.get(), c_.op(), c_.redop, c_.dtype, c_.count,
                                  c_.world, r, kGeneration, nullptr);
    }
    return e == cudaSuccess ? cudaDeviceSynchronize() : e;
  }

  // Where rank r's input and result are: the program's buffers when staged in the kernel.
  // In place as programs pass it: reduce-scatter's output is the input's block `r`, and
  // all-gather's input is the output's block `r`.
  void* Input(int r) {
    if (!c_.v.in_kernel) return rank(r).in.get();
    if (c_.v.in_place && c_.op() == core::Op::kAllGather) return Block(Own(rank(r).own_out), r);
    return Own(rank(r).own_in);
  }
  void* Output(int r) {
    if (!c_.v.in_kernel) return c_.v.in_place ? rank(r).in.get() : rank(r).out.get();
    if (!c_.v.in_place || c_.op() == core::Op::kAllGather) return Own(rank(r).own_out);
    return c_.op() == core::Op::kReduceScatter ? Block(Input(r), r) : Input(r);
  }

 private:
  PeerTeam Team(int r) const { return SimTeam(ranks_, r, kBoundNs); }

  void* Own(const DeviceMem& m) const {
    return static_cast<char*>(m.get()) + c_.v.own_offset * core::DtypeSize(c_.dtype);
  }
  void* Block(void* base, int r) const {
    return static_cast<char*>(base) + r * c_.count * core::DtypeSize(c_.dtype);
  }

  bool Allocate() {
    const std::uint64_t esize = core::DtypeSize(c_.dtype);
    const std::uint64_t staging =
        kernels::StagingBytes(c_.v.algo, shape_, c_.count, c_.dtype, c_.world);
    unvouched_ = Zeroed(sizeof(kernels::DirectSlot));
    bool ok = unvouched_ != nullptr;
    for (auto& r : ranks_) {
      r.signals = Zeroed(sizeof(kernels::PeerSignals));
      r.epochs = Zeroed(sizeof(unsigned int) * kernels::kEpochWords);
      r.in = Zeroed(SendElements() * esize + kPadBytes);
      r.out = Zeroed(RecvElements() * esize + kPadBytes);
      r.want = Zeroed(RecvElements() * esize + kPadBytes);
      r.staging = Zeroed(staging + kPadBytes);
      r.own_in = Zeroed(SendElements() * esize + kPadBytes);
      r.own_out = Zeroed(RecvElements() * esize + kPadBytes);
      r.timed_out = Mapped(sizeof(int) * kernels::kTimedOutWords);
      r.stream = NonBlockingStream();
      ok = ok && r.signals && r.epochs && r.in && r.out && r.want && r.staging && r.own_in &&
           r.own_out && r.timed_out && r.stream;
    }
    return ok;
  }

  PeerCase c_;
  PeerShape shape_;
  std::vector<SimRank> ranks_;
  DeviceMem unvouched_;  // a DirectSlot with valid 0: every rank takes the staged path
  bool ok_ = false;
};

class PeerKernelsTest : public GpuParamTest<PeerCase> {};

TEST_P(PeerKernelsTest, MatchesReferenceOnEveryRank) {
  const PeerCase& c = GetParam();
  SimWorld w(c);
  ASSERT_TRUE(w.ok()) << "allocation failed";
  CUDA_ASSERT(w.Fill());
  for (int i = 0; i < kWarmLaunches; ++i) CUDA_ASSERT(w.LaunchAll());
  CUDA_ASSERT(w.Fill());  // in place, the warm launches reduced over the inputs
  CUDA_ASSERT(w.LaunchAll());
  CUDA_ASSERT(w.Reference());
  const double tol = core::VerifyTolerance(c.dtype);
  for (int r = 0; r < c.world; ++r) {
    EXPECT_EQ(0, *static_cast<int*>(w.rank(r).timed_out.get())) << "rank " << r << " timed out";
    EXPECT_EQ("", Differs(w.Output(r), w.rank(r).want.get(), w.RecvElements(), c.dtype, tol))
        << "rank " << r;
    if (c.op() != core::Op::kAllReduce) continue;
    EXPECT_EQ("", Differs(w.Output(r), w.Output(0), w.RecvElements(), c.dtype, 0.0))
        << "rank " << r << " is not bit-identical to rank 0";
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, PeerKernelsTest, ::testing::ValuesIn(AllCases()), CaseName);

}  // namespace
}  // namespace ccltune::testing

// Pull launches of every shape sharing one staging region (runtime/staging_plan.h), on one GPU:
// `world` ranks simulated on the device as in peer_kernels_gpu_test, each with one input and
// one output region that every launch uses. Each rank issues a sequence of staged pull
// launches (one-shot and two-shot all-reduces through the slot no rank vouches for, the
// reduce-scatter and all-gather given the program's input; different blocks, threads,
// unrolls and counts; one in place, one not 16-byte aligned) back to back on its own stream,
// with nothing waited for between them and a different short delay before each launch on each
// rank, so a rank starts the next launch while its peers still finish the last. Every launch
// has its own program buffers and data generation; at the end each output is checked against
// the independent reference (LaunchExpected) and all-reduces must be bit-identical across
// ranks. What it checks: a pull launch reads only what it wrote, and its closing barrier lets a
// rank overwrite its regions only once every peer has read them, whatever the next launch's
// shape. Skips without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
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

constexpr unsigned long long kBoundNs = 2'000'000'000ull;  // a hang fails in 2 s
constexpr std::uint64_t kPadBytes = 256;
constexpr int kRounds = 4;

// One launch of the sequence. count is core::ElementCount (reduce-scatter's and all-gather's
// per rank).
struct Step {
  PeerAlgo algo;
  int blocks;
  int threads;
  int unroll;
  std::uint64_t count;
  bool in_place = false;  // all-reduces only: the program's output is its input
  int own_offset = 0;     // elements past the allocation's start (1: not 16-byte aligned)
  core::Op op() const {
    if (algo == PeerAlgo::kReduceScatter) return core::Op::kReduceScatter;
    if (algo == PeerAlgo::kAllGather) return core::Op::kAllGather;
    return core::Op::kAllReduce;
  }
};

constexpr Step kSteps[] = {
    {PeerAlgo::kOneShot, 8, 512, 2, 12296},          {PeerAlgo::kReduceScatter, 4, 256, 1, 4099},
    {PeerAlgo::kTwoShot, 16, 512, 2, 65536},         {PeerAlgo::kAllGather, 32, 256, 2, 8192},
    {PeerAlgo::kTwoShot, 8, 256, 1, 1003, false, 1}, {PeerAlgo::kOneShot, 32, 512, 1, 4096, true},
    {PeerAlgo::kAllGather, 2, 512, 1, 777},          {PeerAlgo::kReduceScatter, 16, 512, 2, 16384},
};

struct SharedCase {
  int world;
  Dtype dtype;
  RedOp redop;
};

std::string CaseName(const ::testing::TestParamInfo<SharedCase>& info) {
  return "w" + std::to_string(info.param.world) + "_" + core::DtypeName(info.param.dtype) + "_" +
         core::RedOpName(info.param.redop);
}

// A rank's shared regions, signals and stream (SimTeam reads signals, epochs, timed_out).
struct SimRank {
  DeviceMem signals, epochs, in, out;
  HostMem timed_out;
  Stream stream;
};

// One launch's program buffers on one rank, and the reference it must match.
struct Launch {
  const Step* step;
  std::uint64_t generation;
  std::vector<DeviceMem> own_in, own_out, want;  // by rank
};

class SharedStagingTest : public GpuParamTest<SharedCase> {
 protected:
  std::uint64_t Esize() const { return core::DtypeSize(GetParam().dtype); }
  int World() const { return GetParam().world; }
  std::uint64_t Send(const Step& s) const {
    return kernels::SendElements(s.op(), s.count, World());
  }
  std::uint64_t Recv(const Step& s) const {
    return kernels::RecvElements(s.op(), s.count, World());
  }

  void* Input(Launch& l, int r) const {
    return static_cast<char*>(l.own_in[r].get()) + l.step->own_offset * Esize();
  }
  void* Output(Launch& l, int r) const {
    if (l.step->in_place) return Input(l, r);
    return static_cast<char*>(l.own_out[r].get()) + l.step->own_offset * Esize();
  }

  bool AllocateRanks() {
    std::uint64_t in_bytes = 0, out_bytes = 0;
    for (const Step& s : kSteps) {
      in_bytes = std::max(in_bytes, Send(s) * Esize());
      out_bytes = std::max(out_bytes, Recv(s) * Esize());
    }
    ranks_.resize(static_cast<std::size_t>(World()));
    unvouched_ = Zeroed(sizeof(kernels::DirectSlot));
    never_ = Mapped(sizeof(int));
    delay_out_ = Mapped(sizeof(int));
    bool ok = unvouched_ && never_ && delay_out_;
    for (SimRank& r : ranks_) {
      r.signals = Zeroed(sizeof(kernels::PeerSignals));
      r.epochs = Zeroed(sizeof(unsigned int) * kernels::kEpochWords);
      r.in = Zeroed(in_bytes + kPadBytes);
      r.out = Zeroed(out_bytes + kPadBytes);
      r.timed_out = Mapped(sizeof(int) * kernels::kTimedOutWords);
      r.stream = NonBlockingStream();
      ok = ok && r.signals && r.epochs && r.in && r.out && r.timed_out && r.stream;
    }
    return ok;
  }

  // The launch's buffers on every rank, its inputs filled and its reference computed.
  cudaError_t Prepare(Launch& l) {
    const SharedCase& c = GetParam();
    for (int r = 0; r < World(); ++r) {
      const std::uint64_t pad = kPadBytes + l.step->own_offset * Esize();
      l.own_in.push_back(Zeroed(Send(*l.step) * Esize() + pad));
      l.own_out.push_back(Zeroed(Recv(*l.step) * Esize() + pad));
      l.want.push_back(Zeroed(Recv(*l.step) * Esize() + kPadBytes));
      if (!l.own_in.back() || !l.own_out.back() || !l.want.back()) return cudaErrorMemoryAllocation;
      cudaError_t e = kernels::LaunchRandomFill(Input(l, r), Send(*l.step), c.dtype, r,
                                                l.generation, 0, nullptr);
      if (e == cudaSuccess) {
        e = kernels::LaunchExpected(l.want[r].get(), l.step->op(), c.redop, c.dtype, l.step->count,
                                    World(), r, l.generation, nullptr);
      }
      if (e != cudaSuccess) return e;
    }
    return cudaDeviceSynchronize();
  }

  // Rank r's launch of `l` on its stream, after a delay that differs by rank and launch.
  cudaError_t Issue(Launch& l, int r, int index) {
    const SharedCase& c = GetParam();
    const std::uint64_t delay_ns = 5'000ull * static_cast<std::uint64_t>((r * 7 + index * 3) % 5);
    cudaStream_t stream = ranks_[r].stream.get();
    cudaError_t e = kernels::LaunchBoundedSpin(static_cast<const int*>(never_.get()), delay_ns,
                                               static_cast<int*>(delay_out_.get()), stream);
    if (e != cudaSuccess) return e;
    kernels::PeerOperands ops;
    for (int q = 0; q < World(); ++q) {
      ops.in[q] = ranks_[q].in.get();
      ops.out[q] = ranks_[q].out.get();
    }
    ops.own_in = Input(l, r);
    if (l.step->op() == core::Op::kAllReduce) {  // direct mode's kernels, no rank vouching
      ops.direct = static_cast<const kernels::DirectSlot*>(unvouched_.get());
      ops.own_out = Output(l, r);
    } else {
      ops.out[r] = Output(l, r);  // only this rank writes it
    }
    kernels::PeerShape shape;
    shape.blocks = l.step->blocks;
    shape.threads = l.step->threads;
    shape.unroll = l.step->unroll;
    return kernels::LaunchPeerCollective(l.step->algo, SimTeam(ranks_, r, kBoundNs), ops,
                                         l.step->count, c.dtype, c.redop, shape, stream);
  }

  std::vector<SimRank> ranks_;
  DeviceMem unvouched_;  // a DirectSlot with valid 0: every rank takes the staged path
  HostMem never_;        // the delays' abort flag, never set
  HostMem delay_out_;    // the delays' "time bound ended it" (always, by design)
};

TEST_P(SharedStagingTest, EveryLaunchIsRightThoughTheNextOverwritesItsRegions) {
  const SharedCase& c = GetParam();
  ASSERT_TRUE(AllocateRanks()) << "allocation failed";
  std::vector<Launch> launches;
  for (int round = 0; round < kRounds; ++round) {
    for (const Step& s : kSteps) {
      launches.push_back({&s, 100 + launches.size(), {}, {}, {}});
      CUDA_ASSERT(Prepare(launches.back()));
    }
  }
  // Rank-major would let rank 0 run its whole sequence's launches into the barrier waits at
  // once; launch-major keeps every rank's stream fed as a program's would be.
  for (std::size_t i = 0; i < launches.size(); ++i) {
    for (int r = 0; r < c.world; ++r) CUDA_ASSERT(Issue(launches[i], r, static_cast<int>(i)));
  }
  CUDA_ASSERT(cudaDeviceSynchronize());
  const double tol = core::VerifyTolerance(c.dtype);
  for (int r = 0; r < c.world; ++r) {
    EXPECT_EQ(0, *static_cast<int*>(ranks_[r].timed_out.get())) << "rank " << r << " timed out";
  }
  for (std::size_t i = 0; i < launches.size(); ++i) {
    Launch& l = launches[i];
    const std::string what = "launch " + std::to_string(i) + " (" + core::OpName(l.step->op()) +
                             ", " + std::to_string(l.step->count) + " elements, " +
                             std::to_string(l.step->blocks) + " blocks) rank ";
    for (int r = 0; r < c.world; ++r) {
      EXPECT_EQ("", Differs(Output(l, r), l.want[r].get(), Recv(*l.step), c.dtype, tol))
          << what << r;
      if (l.step->op() != core::Op::kAllReduce) continue;
      EXPECT_EQ("", Differs(Output(l, r), Output(l, 0), Recv(*l.step), c.dtype, 0.0))
          << what << r << " is not bit-identical to rank 0";
    }
  }
}

std::vector<SharedCase> AllCases() {
  std::vector<SharedCase> out;
  for (int world : {2, 3, 4}) {
    for (Dtype d : {Dtype::kFp32, Dtype::kBf16}) {
      for (RedOp r : {RedOp::kSum, RedOp::kAvg}) out.push_back({world, d, r});
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Kernels, SharedStagingTest, ::testing::ValuesIn(AllCases()), CaseName);

}  // namespace
}  // namespace ccltune::testing

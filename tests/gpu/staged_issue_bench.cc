// What a staged pull kernel costs the host to issue (apply::StagesInKernel): the copy in,
// the kernel and (two-shot all-reduce) the copy out as separate stream operations, against
// the one launch that copies inside itself (the all-reduces: the direct-mode kernel with a
// slot no rank vouches for). Eager
// programs are host-bound, so the issue cost decides whether a staged winner can pay off.
// Ranks are simulated on one GPU (sim_device.h): the host side is a real rank's, the GPU
// time is not NVLink's and is printed only to show both variants ran.
//   staged_issue_bench [iterations]   (default 2000 per size and variant)
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/kernels/kernels.h"
#include "core/kernels/peer_kernels.h"
#include "core/plan/types.h"
#include "tests/gpu/sim_device.h"

namespace ccltune::testing {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kWorld = 2;
constexpr int kSyncEvery = 16;  // keeps the launch queue short, outside the timed part
constexpr core::Dtype kDtype = core::Dtype::kBf16;

struct Rank {
  DeviceMem signals, epochs, in, out, own_in, own_out;
  HostMem timed_out;
  Stream stream;
};

struct World {
  std::vector<Rank> ranks{kWorld};
  DeviceMem unvouched;
  bool Allocate(std::uint64_t bytes) {
    unvouched = Zeroed(sizeof(kernels::DirectSlot));
    bool ok = unvouched != nullptr;
    for (Rank& r : ranks) {
      r.signals = Zeroed(sizeof(kernels::PeerSignals));
      r.epochs = Zeroed(sizeof(unsigned int) * kernels::kEpochWords);
      r.in = Zeroed(bytes);
      r.out = Zeroed(bytes);
      r.own_in = Zeroed(bytes);
      r.own_out = Zeroed(bytes);
      r.timed_out = Mapped(sizeof(int) * kernels::kTimedOutWords);
      r.stream = NonBlockingStream();
      ok = ok && r.signals && r.epochs && r.in && r.out && r.own_in && r.own_out && r.timed_out &&
           r.stream;
    }
    return ok;
  }
  kernels::PeerTeam Team(int r) const { return SimTeam(ranks, r, 2'000'000'000ull); }
};

// The op an algorithm runs; `count` is core::ElementCount's (per rank for the split ops).
core::Op OpOf(kernels::PeerAlgo algo) {
  return algo == kernels::PeerAlgo::kReduceScatter ? core::Op::kReduceScatter
         : algo == kernels::PeerAlgo::kAllGather   ? core::Op::kAllGather
                                                   : core::Op::kAllReduce;
}

// One call on rank r: the copies around the kernel, or one launch that copies itself (the
// all-reduces through direct mode's kernel and a slot no rank vouches for).
cudaError_t Issue(World& w, int r, kernels::PeerAlgo algo, std::uint64_t count, bool in_kernel) {
  kernels::PeerOperands ops;
  for (int q = 0; q < kWorld; ++q) {
    ops.in[q] = w.ranks[q].in.get();
    ops.out[q] = w.ranks[q].out.get();
  }
  Rank& me = w.ranks[r];
  const core::Op op = OpOf(algo);
  const std::uint64_t in_bytes = kernels::SendElements(op, count, kWorld) * core::DtypeSize(kDtype);
  const std::uint64_t out_bytes =
      kernels::RecvElements(op, count, kWorld) * core::DtypeSize(kDtype);
  const core::RedOp redop = op == core::Op::kAllGather ? core::RedOp::kNone : core::RedOp::kSum;
  kernels::PeerShape shape;
  shape.blocks = 32;
  shape.threads = 512;
  shape.unroll = 2;
  cudaStream_t s = me.stream.get();
  const bool copy_out = algo == kernels::PeerAlgo::kTwoShot;
  if (in_kernel) {
    ops.own_in = me.own_in.get();
    if (op == core::Op::kAllReduce) {
      ops.direct = static_cast<const kernels::DirectSlot*>(w.unvouched.get());
      ops.own_out = me.own_out.get();
    } else {
      ops.out[r] = me.own_out.get();
    }
    return kernels::LaunchPeerCollective(algo, w.Team(r), ops, count, kDtype, redop, shape, s);
  }
  if (!copy_out) ops.out[r] = me.own_out.get();
  cudaError_t e =
      cudaMemcpyAsync(me.in.get(), me.own_in.get(), in_bytes, cudaMemcpyDeviceToDevice, s);
  if (e == cudaSuccess) {
    e = kernels::LaunchPeerCollective(algo, w.Team(r), ops, count, kDtype, redop, shape, s);
  }
  if (e == cudaSuccess && copy_out) {
    e = cudaMemcpyAsync(me.own_out.get(), me.out.get(), out_bytes, cudaMemcpyDeviceToDevice, s);
  }
  return e;
}

struct Figures {
  double issue_us;  // median host time to issue one rank's call
  double gpu_us;    // GPU time per call of both ranks, simulated: not NVLink's
};

bool Measure(World& w, kernels::PeerAlgo algo, std::uint64_t count, bool in_kernel, int iters,
             Figures* f) {
  std::vector<double> issue;
  issue.reserve(static_cast<std::size_t>(iters) * kWorld);
  cudaEvent_t start = nullptr, end = nullptr;
  if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&end) != cudaSuccess) return false;
  if (cudaDeviceSynchronize() != cudaSuccess) return false;
  float gpu_ms = 0;
  for (int i = 0; i < iters; ++i) {
    if (i % kSyncEvery == 0) {
      if (i > 0) {
        if (cudaEventRecord(end, w.ranks[0].stream.get()) != cudaSuccess) return false;
        if (cudaDeviceSynchronize() != cudaSuccess) return false;
        float ms = 0;
        cudaEventElapsedTime(&ms, start, end);
        gpu_ms += ms;
      }
      if (cudaEventRecord(start, w.ranks[0].stream.get()) != cudaSuccess) return false;
    }
    for (int r = 0; r < kWorld; ++r) {
      const Clock::time_point t0 = Clock::now();
      if (Issue(w, r, algo, count, in_kernel) != cudaSuccess) return false;
      issue.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
  }
  if (cudaDeviceSynchronize() != cudaSuccess) return false;
  cudaEventDestroy(start);
  cudaEventDestroy(end);
  for (Rank& r : w.ranks) {
    if (*static_cast<int*>(r.timed_out.get()) != 0) return false;
  }
  std::nth_element(issue.begin(), issue.begin() + issue.size() / 2, issue.end());
  f->issue_us = issue[issue.size() / 2];
  const int timed = (iters - 1) / kSyncEvery * kSyncEvery;
  f->gpu_us = timed > 0 ? gpu_ms * 1000.0 / timed : 0;
  return true;
}

int Run(int iters) {
  const std::string missing = GpuMissing();
  if (!missing.empty()) {
    std::printf("needs a GPU: %s\n", missing.c_str());
    return 0;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf(
      "# %s, %d ranks simulated on it, bf16 sum, 32 blocks x 512 threads, %d calls a "
      "variant\n",
      prop.name, kWorld, iters);
  std::printf(
      "| kernel | size | issue, copies around (us) | issue, copies inside (us) | "
      "ratio | GPU us around / inside (simulated) |\n|---|---|---|---|---|---|\n");
  const std::pair<kernels::PeerAlgo, const char*> algos[] = {
      {kernels::PeerAlgo::kOneShot, "one-shot pull"},
      {kernels::PeerAlgo::kTwoShot, "two-shot pull"},
      {kernels::PeerAlgo::kReduceScatter, "reduce-scatter pull"},
      {kernels::PeerAlgo::kAllGather, "all-gather pull (p2p)"}};
  for (const auto& [algo, name] : algos) {
    for (std::uint64_t bytes : {std::uint64_t{256} << 10, std::uint64_t{2} << 20}) {
      World w;
      if (!w.Allocate(bytes)) {  // every buffer the size of the whole message
        std::printf("allocation failed\n");
        return 1;
      }
      // The message's elements (nccl-tests' size), per rank for the split ops.
      const std::uint64_t count = core::ElementCount(OpOf(algo), kDtype, bytes, kWorld);
      Figures around{}, inside{};
      // Interleaved, twice each, keeping the second: both variants see the same warm state.
      for (int pass = 0; pass < 2; ++pass) {
        if (!Measure(w, algo, count, false, iters, &around) ||
            !Measure(w, algo, count, true, iters, &inside)) {
          std::printf("%s %llu B: a launch failed or timed out\n", name,
                      static_cast<unsigned long long>(bytes));
          return 1;
        }
      }
      std::printf("| %s | %llu KiB | %.2f | %.2f | %.2fx | %.1f / %.1f |\n", name,
                  static_cast<unsigned long long>(bytes >> 10), around.issue_us, inside.issue_us,
                  around.issue_us / inside.issue_us, around.gpu_us, inside.gpu_us);
    }
  }
  return 0;
}

}  // namespace
}  // namespace ccltune::testing

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 2000;
  if (iters < 32 || iters > 1000000) {
    std::fprintf(stderr, "usage: staged_issue_bench [iterations: 32..1000000]\n");
    return 2;
  }
  return ccltune::testing::Run(iters);
}

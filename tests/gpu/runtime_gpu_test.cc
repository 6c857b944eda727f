// libccltune on GPUs (issue 15), one forked process per GPU as applications run it:
//  - every op x fp32/fp16/bf16 x sum/max/min, odd sizes, in place and out of place, plain
//    and pooled buffers, eager and CUDA-graph, through the runtime against NCCL on the same
//    inputs, with winners that send it down each of its paths (tests/gpu/runtime_winners.h);
//  - no winners, another fingerprint's winners, peer memory off: NCCL, the same results;
//  - a bad config field: one clear error; a peer that never arrives: a bounded error;
//  - a peer that dies (issue 36): every survivor's next call stops its GPU context within
//    the timeout + 5 s, no call completes after the death, and the message names the rank;
//  - all-reduce + residual/RMSNorm and + bias (issue 16), fp32/fp16/bf16, tuned and odd
//    token counts, in place and out of place, plain and pooled, eager and CUDA-graph, with
//    winners that send them down each path (fused LL/pull/two-shot, our unfused kernels,
//    rs+ag, ctas, NCCL) and without, against the independent fp64 reference of the
//    epilogue kernels (kernels::LaunchEpilogueExpected);
//  - the hierarchical all-reduce (issue 33) on 4 GPUs as 2 emulated nodes x 2 (each half
//    with its own CCLTUNE_NODE_NAME and NCCL_HOSTID, so NCCL joins the halves with its
//    network transport): hier winners run for plain and pooled buffers, eager and CUDA-graph,
//    in place and not, against NCCL's result; init's summary says the node team is up, and
//    NCCL's own log (NCCL_DEBUG_SUBSYS=COLL) shows one all-reduce of 2 ranks (hier's phase
//    across the nodes) per call that ran hier; with peer memory off the same winners fall
//    back (summary: why) and NCCL's log shows none.
// On one GPU the peer kernels cannot run (they need 2-8 ranks) and the rule's substitutes
// run instead; the summary says which choices ran.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "ccltune.h"
#include "core/kernels/epilogue_kernels.h"
#include "core/kernels/kernels.h"
#include "tests/gpu/gpu_test_env.h"
#include "tests/gpu/nccl_rank.h"
#include "tests/gpu/rank_harness.h"
#include "tests/gpu/runtime_winners.h"
#include "tests/gpu/vmm_buffer.h"

namespace ccltune::testing {
namespace {

using core::Dtype;
using core::Op;
using core::RedOp;

#define RT_CHECK(expr)                                                                             \
  do {                                                                                             \
    if (!(expr)) {                                                                                 \
      std::fprintf(stderr, "FAILED %s at line %d (%s)\n", #expr, __LINE__, ccltuneGetLastError()); \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

ncclDataType_t NcclOf(Dtype d) {
  return d == Dtype::kFp32 ? ncclFloat32 : d == Dtype::kFp16 ? ncclFloat16 : ncclBfloat16;
}
ncclRedOp_t NcclOf(RedOp r) {
  return r == RedOp::kMax   ? ncclMax
         : r == RedOp::kMin ? ncclMin
         : r == RedOp::kAvg ? ncclAvg
                            : ncclSum;
}
ccltuneOp_t CcltuneOf(Op op) {
  return op == Op::kAllReduce   ? ccltuneAllReduceOp
         : op == Op::kAllGather ? ccltuneAllGatherOp
                                : ccltuneReduceScatterOp;
}

struct Case {
  Op op;
  Dtype dtype;
  RedOp redop;
  std::uint64_t bytes;  // the whole message; counts are derived (odd ones too)
  bool in_place;
  bool pooled;
  bool graph;
};

// Per-rank counts of a case: allReduce count, allGather sendcount, reduceScatter recvcount.
std::uint64_t CountOf(const Case& c, int world) {
  const std::uint64_t elems = c.bytes / core::DtypeSize(c.dtype);
  return c.op == Op::kAllReduce ? elems : std::max<std::uint64_t>(1, elems / world);
}

class RankRunner {
 public:
  RankRunner(ccltuneComm_t rt, ncclComm_t nccl, int rank, int world, cudaStream_t s)
      : rt_(rt), nccl_(nccl), rank_(rank), world_(world), s_(s) {}

  // 0 when the runtime's output equals NCCL's within the dtype's tolerance.
  int Run(const Case& c, std::map<std::string, int>* ran) {
    const std::uint64_t count = CountOf(c, world_);
    const std::size_t es = core::DtypeSize(c.dtype);
    const std::uint64_t send_elems = c.op == Op::kReduceScatter ? count * world_ : count;
    const std::uint64_t recv_elems = c.op == Op::kAllGather ? count * world_ : count;
    const std::size_t big = std::max(send_elems, recv_elems) * es;
    void* a = nullptr;
    void* b = nullptr;
    void* want = nullptr;
    if (c.pooled) {
      RT_CHECK(ccltuneMemAlloc(rt_, &a, big) == ccltuneSuccess);
      RT_CHECK(ccltuneMemAlloc(rt_, &b, big) == ccltuneSuccess);
    } else {
      RT_CHECK(cudaMalloc(&a, big) == cudaSuccess && cudaMalloc(&b, big) == cudaSuccess);
    }
    RT_CHECK(cudaMalloc(&want, big) == cudaSuccess);
    void* send = a;
    void* recv = c.in_place ? a : b;
    if (c.in_place && c.op == Op::kAllGather) send = static_cast<char*>(a) + rank_ * count * es;
    if (c.in_place && c.op == Op::kReduceScatter) recv = static_cast<char*>(a) + rank_ * count * es;
    const int rc = Compare(c, count, send, recv, want, ran);
    if (c.pooled) {
      RT_CHECK(ccltuneMemFree(rt_, a) == ccltuneSuccess &&
               ccltuneMemFree(rt_, b) == ccltuneSuccess);
    } else {
      cudaFree(a);
      cudaFree(b);
    }
    cudaFree(want);
    return rc;
  }

 private:
  int Launch(const Case& c, std::uint64_t count, const void* send, void* recv) {
    const ncclDataType_t t = NcclOf(c.dtype);
    ccltuneResult_t r = ccltuneSuccess;
    if (c.op == Op::kAllReduce)
      r = ccltuneAllReduce(send, recv, count, t, NcclOf(c.redop), rt_, s_);
    if (c.op == Op::kAllGather) r = ccltuneAllGather(send, recv, count, t, rt_, s_);
    if (c.op == Op::kReduceScatter)
      r = ccltuneReduceScatter(send, recv, count, t, NcclOf(c.redop), rt_, s_);
    RT_CHECK(r == ccltuneSuccess);
    return 0;
  }

  int Reference(const Case& c, std::uint64_t count, const void* send, void* want) {
    const ncclDataType_t t = NcclOf(c.dtype);
    if (c.op == Op::kAllReduce)
      RT_CHECK(ncclAllReduce(send, want, count, t, NcclOf(c.redop), nccl_, s_) == ncclSuccess);
    if (c.op == Op::kAllGather)
      RT_CHECK(ncclAllGather(send, want, count, t, nccl_, s_) == ncclSuccess);
    if (c.op == Op::kReduceScatter)
      RT_CHECK(ncclReduceScatter(send, want, count, t, NcclOf(c.redop), nccl_, s_) == ncclSuccess);
    return 0;
  }

  int Compare(const Case& c, std::uint64_t count, const void* send, void* recv, void* want,
              std::map<std::string, int>* ran) {
    const std::uint64_t fill = c.op == Op::kReduceScatter ? count * world_ : count;
    const std::uint64_t out = c.op == Op::kAllGather ? count * world_ : count;
    auto refill = [&]() {
      return kernels::LaunchRandomFill(const_cast<void*>(send), fill, c.dtype, rank_, ++gen_, 0,
                                       s_);
    };
    // The reference first (out of place, into `want`), then the runtime on the same input.
    RT_CHECK(refill() == cudaSuccess);
    RT_CHECK(Reference(c, count, send, want) == 0);
    if (c.graph) {
      cudaGraph_t g = nullptr;
      cudaGraphExec_t ge = nullptr;
      RT_CHECK(cudaStreamBeginCapture(s_, cudaStreamCaptureModeGlobal) == cudaSuccess);
      const int launched = Launch(c, count, send, recv);
      RT_CHECK(cudaStreamEndCapture(s_, &g) == cudaSuccess && launched == 0);
      RT_CHECK(cudaGraphInstantiate(&ge, g, 0) == cudaSuccess);
      RT_CHECK(cudaGraphLaunch(ge, s_) == cudaSuccess);
      RT_CHECK(cudaStreamSynchronize(s_) == cudaSuccess);
      cudaGraphExecDestroy(ge);
      cudaGraphDestroy(g);
    } else {
      RT_CHECK(Launch(c, count, send, recv) == 0);
    }
    kernels::Mismatch* mm = nullptr;
    RT_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&mm), sizeof(*mm), cudaHostAllocMapped) ==
             cudaSuccess);
    const double tol = c.dtype == Dtype::kFp32 ? 1e-5 : 2e-2;
    RT_CHECK(kernels::LaunchCompare(recv, want, out, c.dtype, tol, mm, s_) == cudaSuccess);
    RT_CHECK(cudaStreamSynchronize(s_) == cudaSuccess);
    const bool ok = mm->index == ~0ull;
    char name[256] = {};
    RT_CHECK(ccltuneGetChoice(rt_, CcltuneOf(c.op), NcclOf(c.dtype), NcclOf(c.redop), c.bytes,
                              c.pooled, name, sizeof(name)) == ccltuneSuccess);
    ++(*ran)[name];
    if (!ok) {
      std::fprintf(stderr,
                   "WRONG %s %s %s %llu B in_place=%d pooled=%d graph=%d via %s: [%llu] %g vs %g\n",
                   core::OpName(c.op), core::DtypeName(c.dtype), core::RedOpName(c.redop),
                   static_cast<unsigned long long>(c.bytes), c.in_place, c.pooled, c.graph, name,
                   mm->index, mm->got, mm->want);
    }
    cudaFreeHost(mm);
    return ok ? 0 : 1;
  }

  ccltuneComm_t rt_;
  ncclComm_t nccl_;
  int rank_;
  int world_;
  cudaStream_t s_;
  std::uint64_t gen_ = 0;
};

// `odd_counts`: also an all-reduce one element longer than the tuned size (an odd count,
// which the node's two ranks of hier cannot split).
std::vector<Case> CasesOf(const std::vector<TunedSize>& sizes, int world, bool odd_counts) {
  std::vector<Case> out;
  for (const TunedSize& s : sizes) {
    for (Dtype d : {Dtype::kFp32, Dtype::kFp16, Dtype::kBf16}) {
      for (RedOp r : {RedOp::kSum, RedOp::kMax, RedOp::kMin, RedOp::kAvg}) {
        if (s.op == Op::kAllGather && r != RedOp::kSum) continue;
        const RedOp red = s.op == Op::kAllGather ? RedOp::kNone : r;
        std::vector<std::uint64_t> all = {s.bytes, s.bytes + 6 * core::DtypeSize(d) * world};
        if (odd_counts && s.op == Op::kAllReduce) all.push_back(s.bytes + core::DtypeSize(d));
        // The tuned size, and an odd one near it (a count no kernel's vector width divides).
        for (std::uint64_t bytes : all) {
          for (int variant = 0; variant < 4; ++variant) {
            out.push_back({s.op, d, red, bytes, (variant & 1) != 0, (variant & 2) != 0,
                           ((variant + static_cast<int>(d)) & 1) != 0});
          }
        }
      }
    }
  }
  return out;
}

std::vector<Case> Cases(int world) { return CasesOf(RuntimeTestSizes(), world, false); }

// This rank's NCCL communicator and the runtime over it, with the test's winners (or none;
// `results`: other winners) and a 256 MiB pool; false when either failed.
bool StartRank(const std::string& dir, int rank, int world, bool winners, int peer_memory,
               ncclComm_t* nccl, ccltuneComm_t* rt, int timeout_ms = 20000,
               const std::string& results = "", std::size_t staging_bytes = 0) {
  if (cudaSetDevice(EnterRankDevice(rank)) != cudaSuccess) return false;
  *nccl = SharedNcclComm(dir, rank, world);
  if (*nccl == nullptr) return false;
  const std::string file = dir + "/winners-" + std::to_string(rank) + ".json";
  std::ofstream(file) << (results.empty() ? RuntimeTestResults(world) : results);
  ccltuneConfig_t cfg = CCLTUNE_CONFIG_INITIALIZER;
  cfg.resultsFile = winners ? file.c_str() : "";
  cfg.fingerprint = kRuntimeTestFingerprint;
  cfg.poolBytes = std::size_t{256} << 20;
  cfg.timeoutMs = timeout_ms;
  cfg.peerMemory = peer_memory;
  cfg.stagingBytes = staging_bytes;  // 0: the default
  if (ccltuneCommInit(*nccl, &cfg, rt) == ccltuneSuccess) return true;
  std::fprintf(stderr, "ccltuneCommInit: %s\n", ccltuneGetLastError());
  return false;
}

int CorrectnessRank(const std::string& dir, int rank, int world, bool winners, int peer_memory = -1,
                    std::size_t staging_bytes = 0) {
  ncclComm_t nccl = nullptr;
  ccltuneComm_t rt = nullptr;
  RT_CHECK(StartRank(dir, rank, world, winners, peer_memory, &nccl, &rt, 20000, "", staging_bytes));
  cudaStream_t s = nullptr;
  RT_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  RankRunner runner(rt, nccl, rank, world, s);
  std::map<std::string, int> ran;
  int wrong = 0, total = 0;
  for (const Case& c : Cases(world)) {
    wrong += runner.Run(c, &ran);
    ++total;
  }
  ccltuneResult_t async = ccltuneSuccess;
  RT_CHECK(ccltuneCommGetAsyncError(rt, &async) == ccltuneSuccess && async == ccltuneSuccess);
  RT_CHECK(ccltuneCommDestroy(rt) == ccltuneSuccess);
  ncclCommDestroy(nccl);
  std::printf("rank %d: %d cases, %d wrong; ran:", rank, total, wrong);
  for (const auto& [name, n] : ran) std::printf(" %s x%d;", name.c_str(), n);
  std::printf("\n");
  return wrong == 0 ? 0 : 1;
}

void RunWorld(const std::string& tag, const std::function<int(const std::string&, int, int)>& body,
              int world) {
  GpuTestDir dir(tag);
  const auto outcomes =
      RunRanks(world, dir.path(), 900, [&](int r) { return body(dir.path(), r, world); });
  std::string text = Describe(outcomes);
  for (const auto& o : outcomes) EXPECT_EQ(o.exit_code, 0) << text;
  WriteSummary(tag + ".txt", text);
  std::printf("%s", text.c_str());
}

TEST(RuntimeGpu, MatchesNcclOnEveryPath) {
  const int world = GpuWorldOrZero(1);
  if (world == 0) GTEST_SKIP() << "no GPU";
  RunWorld(
      "runtime-correct",
      [](const std::string& d, int r, int w) { return CorrectnessRank(d, r, w, true); }, world);
}

// A staging area too small for the larger push, LL and staged signatures: those calls find no
// room and run their size's runner-up where it fits, else are handed back to the caller (the
// C API runs NCCL); every one is still right.
TEST(RuntimeGpu, AFullStagingAreaFallsBackAndStaysRight) {
  const int world = GpuWorldOrZero(2);
  if (world == 0) GTEST_SKIP() << "needs 2 GPUs";
  RunWorld(
      "runtime-staging-full",
      [](const std::string& d, int r, int w) {
        return CorrectnessRank(d, r, w, true, -1, std::size_t{256} << 10);
      },
      world);
}

// CCLTUNE_CONFIRM_CALLS (runtime/confirm/trial_rule.h): every eager case on plain buffers runs
// ten times, checked each time against NCCL: with 2 calls an arm, an untimed round and two
// timed ones of up to three arms (the choice, its runner-up, NCCL's own), then the call that
// decides. The
// ranks must decide alike: each writes what plain buffers run per case after its trial, and the
// files must match. `calls`: this rank's setting.
int TrialRank(const std::string& dir, int rank, int world, int calls) {
  ::setenv("CCLTUNE_CONFIRM_CALLS", std::to_string(calls).c_str(), 1);
  ncclComm_t nccl = nullptr;
  ccltuneComm_t rt = nullptr;
  RT_CHECK(StartRank(dir, rank, world, true, -1, &nccl, &rt));
  cudaStream_t s = nullptr;
  RT_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  RankRunner runner(rt, nccl, rank, world, s);
  std::map<std::string, int> ran;
  int wrong = 0, total = 0;
  std::ofstream verdicts(dir + "/trial-" + std::to_string(rank) + ".txt");
  for (const Case& c : Cases(world)) {
    if (c.pooled || c.graph) continue;
    for (int call = 0; call < 10; ++call, ++total) wrong += runner.Run(c, &ran);
    char name[256] = {};
    RT_CHECK(ccltuneGetChoice(rt, CcltuneOf(c.op), NcclOf(c.dtype), NcclOf(c.redop), c.bytes, 0,
                              name, sizeof(name)) == ccltuneSuccess);
    verdicts << core::OpName(c.op) << " " << core::DtypeName(c.dtype) << " "
             << core::RedOpName(c.redop) << " " << c.bytes << " " << name << "\n";
  }
  RT_CHECK(ccltuneCommDestroy(rt) == ccltuneSuccess);
  ncclCommDestroy(nccl);
  std::printf("rank %d: %d calls in trials, %d wrong\n", rank, total, wrong);
  return wrong == 0 ? 0 : 1;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs TrialRank on every rank with `calls_of(rank)`; every rank right, and alike. Rank 0's log.
std::string RunTrialWorld(const std::string& tag, const std::function<int(int)>& calls_of) {
  const int world = SharedOrGpuWorldOrZero(2);
  GpuTestDir dir(tag);
  const auto outcomes = RunRanks(
      world, dir.path(), 900, [&](int r) { return TrialRank(dir.path(), r, world, calls_of(r)); });
  const std::string text = Describe(outcomes);
  for (const auto& o : outcomes) EXPECT_EQ(o.exit_code, 0) << text;
  const std::string first = ReadText(dir.path() + "/trial-0.txt");
  EXPECT_FALSE(first.empty());
  for (int r = 1; r < world; ++r)
    EXPECT_EQ(ReadText(dir.path() + "/trial-" + std::to_string(r) + ".txt"), first) << "rank " << r;
  const std::string log = ReadText(dir.path() + "/rank0.log");
  WriteSummary(tag + ".txt", text + first + log);
  std::printf("%s%s", text.c_str(), first.c_str());
  return log;
}

TEST(RuntimeGpu, InProgramTrialsStayRightAndDecideAlikeOnEveryRank) {
  if (SharedOrGpuWorldOrZero(2) == 0) GTEST_SKIP() << "needs 2 GPUs, or one shared";
  const std::string log = RunTrialWorld("runtime-trial", [](int) { return 2; });
  EXPECT_NE(log.find("in-program trial of 2 calls an arm"), std::string::npos) << log;
  // Rank 0 names each tried size's verdict: the trial ran, and decided.
  EXPECT_NE(log.find(" a call in this program against NCCL's own "), std::string::npos) << log;
}

TEST(RuntimeGpu, AnInProgramTrialSettingThatDiffersBetweenRanksIsOffOnEvery) {
  if (SharedOrGpuWorldOrZero(2) == 0) GTEST_SKIP() << "needs 2 GPUs, or one shared";
  const std::string log = RunTrialWorld("runtime-trial-differs", [](int r) { return 2 + r; });
  EXPECT_NE(log.find("CCLTUNE_CONFIRM_CALLS differs between ranks (2, 3): no in-program trial"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find(" a call in this program against NCCL's own "), std::string::npos) << log;
}

// Issue 43: staged all-reduces captured on the program's own registered buffers, replayed
// before the peers' posts can have arrived (the in-kernel staged path), once every rank
// published its slot (the direct path), and after the allocator's reuse: the buffers
// deregistered, freed and allocated again (cudaMalloc hands the same address back), new
// data written, and the old graph replayed (its slot withdrawn: staged again) beside a new
// capture on the new segment (direct again). Every replay is checked against NCCL on the
// same input, with cudaMalloc and with virtual-memory buffers (their handles travel as file
// descriptors); each rank's log must show its slots ready and then withdrawn.
class DirectRank {
 public:
  // `vmm`: the buffers come from the virtual memory API (shared as file descriptors).
  DirectRank(ccltuneComm_t rt, ncclComm_t nccl, int rank, cudaStream_t s, bool vmm = false)
      : rt_(rt), nccl_(nccl), rank_(rank), s_(s), vmm_(vmm) {}

  int Run(std::uint64_t bytes, bool in_place) {
    count_ = bytes / sizeof(float);
    RT_CHECK(Allocate() == 0);
    cudaGraphExec_t old_graph = nullptr;
    RT_CHECK(Capture(in_place, &old_graph) == 0);
    RT_CHECK(Replays(old_graph, in_place, 1) == 0);  // at once: staged in the kernel
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    RT_CHECK(Replays(old_graph, in_place, 5) == 0);  // published: direct
    // The allocator's reuse: deregistered (withdrawn before it returns), freed, again.
    void* old_in = in_;
    RT_CHECK(ccltuneMemDeregister(in_) == ccltuneSuccess);
    RT_CHECK(ccltuneMemDeregister(out_) == ccltuneSuccess);
    Free(in_);
    Free(out_);
    RT_CHECK(Allocate() == 0);
    if (in_ != old_in) {
      std::printf("rank %d: the allocator moved the buffer; the old graph is not replayed\n",
                  rank_);
    } else {
      RT_CHECK(Replays(old_graph, in_place, 3) == 0);
    }
    cudaGraphExec_t new_graph = nullptr;
    RT_CHECK(Capture(in_place, &new_graph) == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    RT_CHECK(Replays(new_graph, in_place, 5) == 0);
    cudaGraphExecDestroy(old_graph);
    cudaGraphExecDestroy(new_graph);
    RT_CHECK(ccltuneMemDeregister(in_) == ccltuneSuccess);
    RT_CHECK(ccltuneMemDeregister(out_) == ccltuneSuccess);
    Free(in_);
    Free(out_);
    cudaFree(want_);
    return wrong_;
  }

 private:
  void* One(std::size_t b) {
    void* p = nullptr;
    if (vmm_) return VmmAllocate(rank_, b);
    return cudaMalloc(&p, b) == cudaSuccess ? p : nullptr;
  }
  void Free(void* p) {
    if (vmm_) {
      VmmFree(p);
    } else {
      cudaFree(p);
    }
  }

  int Allocate() {
    const std::size_t b = count_ * sizeof(float);
    in_ = One(b);
    out_ = One(b);
    RT_CHECK(in_ != nullptr && out_ != nullptr);
    if (want_ == nullptr) RT_CHECK(cudaMalloc(&want_, b) == cudaSuccess);
    RT_CHECK(ccltuneMemRegister(in_, b) == ccltuneSuccess);
    RT_CHECK(ccltuneMemRegister(out_, b) == ccltuneSuccess);
    return 0;
  }

  int Capture(bool in_place, cudaGraphExec_t* exec) {
    cudaGraph_t g = nullptr;
    RT_CHECK(cudaStreamBeginCapture(s_, cudaStreamCaptureModeGlobal) == cudaSuccess);
    const ccltuneResult_t r =
        ccltuneAllReduce(in_, in_place ? in_ : out_, count_, ncclFloat32, ncclSum, rt_, s_);
    RT_CHECK(cudaStreamEndCapture(s_, &g) == cudaSuccess && r == ccltuneSuccess);
    RT_CHECK(cudaGraphInstantiate(exec, g, 0) == cudaSuccess);
    cudaGraphDestroy(g);
    return 0;
  }

  // `n` replays, each on fresh data, each checked against NCCL's sum of the same input.
  int Replays(cudaGraphExec_t exec, bool in_place, int n) {
    for (int i = 0; i < n; ++i) {
      RT_CHECK(kernels::LaunchRandomFill(in_, count_, Dtype::kFp32, rank_, ++gen_, 0, s_) ==
               cudaSuccess);
      RT_CHECK(ncclAllReduce(in_, want_, count_, ncclFloat32, ncclSum, nccl_, s_) == ncclSuccess);
      RT_CHECK(cudaGraphLaunch(exec, s_) == cudaSuccess);
      kernels::Mismatch* mm = nullptr;
      RT_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&mm), sizeof(*mm), cudaHostAllocMapped) ==
               cudaSuccess);
      RT_CHECK(kernels::LaunchCompare(in_place ? in_ : out_, want_, count_, Dtype::kFp32, 1e-5, mm,
                                      s_) == cudaSuccess);
      RT_CHECK(cudaStreamSynchronize(s_) == cudaSuccess);
      if (mm->index != ~0ull) {
        std::fprintf(stderr, "WRONG direct %llu elements in_place=%d replay %d: [%llu] %g vs %g\n",
                     static_cast<unsigned long long>(count_), in_place, i, mm->index, mm->got,
                     mm->want);
        ++wrong_;
      }
      cudaFreeHost(mm);
    }
    return 0;
  }

  ccltuneComm_t rt_;
  ncclComm_t nccl_;
  int rank_;
  cudaStream_t s_;
  bool vmm_;
  std::uint64_t count_ = 0;
  std::uint64_t gen_ = 1000;
  void* in_ = nullptr;
  void* out_ = nullptr;
  void* want_ = nullptr;
  int wrong_ = 0;
};

int DirectRankBody(const std::string& dir, int rank, int world) {
  setenv("CCLTUNE_DIRECT_DEBUG", "1", 1);
  setenv("CCLTUNE_HOLD_IN_PLACE", "1", 1);  // the in-place one-shot cases take slots too
  // A program that registers its memory does so before its first collective (PyTorch's
  // allocator hook registers every segment it has when the communicator is made).
  RT_CHECK(cudaSetDevice(rank) == cudaSuccess);
  void* witness = nullptr;
  RT_CHECK(cudaMalloc(&witness, 1 << 20) == cudaSuccess);
  RT_CHECK(ccltuneMemRegister(witness, 1 << 20) == ccltuneSuccess);
  ncclComm_t nccl = nullptr;
  ccltuneComm_t rt = nullptr;
  RT_CHECK(StartRank(dir, rank, world, true, -1, &nccl, &rt));
  cudaStream_t s = nullptr;
  RT_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  int wrong = 0;
  // The test winners' staged pull one-shot (16 KiB) and two-shot (1 MiB), and the pooled
  // pull one-shot (32 KiB) and two-shot (128 KiB) that direct mode runs on these buffers.
  for (std::uint64_t bytes : {std::uint64_t{16384}, std::uint64_t{32768}, std::uint64_t{131072},
                              std::uint64_t{1} << 20}) {
    for (bool in_place : {false, true}) {
      DirectRank r(rt, nccl, rank, s);
      wrong += r.Run(bytes, in_place);
    }
  }
  // Virtual-memory buffers (PyTorch's expandable segments): their descriptors travel.
  for (bool in_place : {false, true}) {
    DirectRank r(rt, nccl, rank, s, /*vmm=*/true);
    wrong += r.Run(std::uint64_t{1} << 20, in_place);
  }
  RT_CHECK(ccltuneCommDestroy(rt) == ccltuneSuccess);
  ncclCommDestroy(nccl);
  RT_CHECK(ccltuneMemDeregister(witness) == ccltuneSuccess);
  cudaFree(witness);
  std::printf("rank %d: direct cases, %d wrong replays\n", rank, wrong);
  return wrong == 0 ? 0 : 1;
}

TEST(RuntimeGpu, CapturedCallsOnRegisteredBuffersStayRightThroughReuse) {
  const int world = GpuWorldOrZero(2);
  if (world == 0) GTEST_SKIP() << "needs 2 GPUs";
  GpuTestDir dir("runtime-direct");
  const auto outcomes =
      RunRanks(world, dir.path(), 600, [&](int r) { return DirectRankBody(dir.path(), r, world); });
  std::string text = Describe(outcomes);
  for (const auto& o : outcomes) EXPECT_EQ(o.exit_code, 0) << text;
  // Per rank: which slots became ready (direct replays ran) and which were withdrawn.
  for (int r = 0; r < world; ++r) {
    std::ifstream log(dir.path() + "/rank" + std::to_string(r) + ".log");
    int ready = 0, withdrawn = 0;
    std::map<std::string, int> states;  // each state line once, with its count
    for (std::string line; std::getline(log, line);) {
      if (line.find("direct slot") == std::string::npos) continue;
      ++states[line.substr(line.find(": ", line.find("direct slot")) + 2)];
      ready += line.find(": ready") != std::string::npos;
      withdrawn += line.find("withdrawn") != std::string::npos;
    }
    text += "rank " + std::to_string(r) + ": slots ready " + std::to_string(ready) +
            ", withdrawn " + std::to_string(withdrawn) + "\n";
    for (const auto& [state, n] : states) text += "  " + state + " x" + std::to_string(n) + "\n";
    // 8 cudaMalloc cases (one-shot in place holds its results) and 2 virtual-memory ones,
    // x 2 captures, each withdrawn once its segments are freed.
    EXPECT_EQ(ready, 20) << text;
    EXPECT_EQ(withdrawn, 20) << text;
  }
  WriteSummary("runtime-direct.txt", text);
  std::printf("%s", text.c_str());
}

TEST(RuntimeGpu, WithoutWinnersRunsNccl) {
  const int world = GpuWorldOrZero(1);
  if (world == 0) GTEST_SKIP() << "no GPU";
  RunWorld(
      "runtime-nccl-only",
      [](const std::string& d, int r, int w) { return CorrectnessRank(d, r, w, false); }, world);
}

TEST(RuntimeGpu, PeerMemoryOffRunsTheRestCorrectly) {
  const int world = GpuWorldOrZero(1);
  if (world == 0) GTEST_SKIP() << "no GPU";
  RunWorld(
      "runtime-peer-off",
      [](const std::string& d, int r, int w) { return CorrectnessRank(d, r, w, true, 0); }, world);
}

// Eager calls on two streams in turn, never synchronized by the caller: the runtime orders
// its kernels across streams (they share one signal area), and every result is right.
int TwoStreamsRank(const std::string& dir, int rank, int world) {
  ncclComm_t nccl = nullptr;
  ccltuneComm_t rt = nullptr;
  RT_CHECK(StartRank(dir, rank, world, /*winners=*/true, -1, &nccl, &rt));
  cudaStream_t s[2];
  for (auto& x : s) RT_CHECK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking) == cudaSuccess);
  // LL one-shot (2 KiB) and push one-shot (8 KiB) winners, alternating streams.
  const std::uint64_t counts[] = {512, 2048};  // fp32: the 2 KiB and 8 KiB tuned sizes
  constexpr int kRounds = 50;
  std::vector<void*> in(2 * kRounds), out(2 * kRounds), want(2);
  for (int k = 0; k < 2; ++k) RT_CHECK(cudaMalloc(&want[k], counts[k] * 4) == cudaSuccess);
  for (int i = 0; i < 2 * kRounds; ++i) {
    const std::uint64_t n = counts[i % 2];
    RT_CHECK(cudaMalloc(&in[i], n * 4) == cudaSuccess && cudaMalloc(&out[i], n * 4) == cudaSuccess);
    RT_CHECK(kernels::LaunchRandomFill(in[i], n, Dtype::kFp32, rank, 7 + i % 2, 0, s[0]) ==
             cudaSuccess);
  }
  for (int k = 0; k < 2; ++k)
    RT_CHECK(ncclAllReduce(in[k], want[k], counts[k], ncclFloat32, ncclSum, nccl, s[0]) ==
             ncclSuccess);
  RT_CHECK(cudaStreamSynchronize(s[0]) == cudaSuccess);
  for (int i = 0; i < 2 * kRounds; ++i) {
    RT_CHECK(ccltuneAllReduce(in[i], out[i], counts[i % 2], ncclFloat32, ncclSum, rt, s[i % 2]) ==
             ccltuneSuccess);
  }
  kernels::Mismatch* mm = nullptr;
  RT_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&mm), sizeof(*mm), cudaHostAllocMapped) ==
           cudaSuccess);
  RT_CHECK(cudaDeviceSynchronize() == cudaSuccess);
  int wrong = 0;
  for (int i = 0; i < 2 * kRounds; ++i) {
    RT_CHECK(kernels::LaunchCompare(out[i], want[i % 2], counts[i % 2], Dtype::kFp32, 1e-5, mm,
                                    s[0]) == cudaSuccess);
    RT_CHECK(cudaStreamSynchronize(s[0]) == cudaSuccess);
    wrong += mm->index != ~0ull;
  }
  ccltuneResult_t async = ccltuneSuccess;
  RT_CHECK(ccltuneCommGetAsyncError(rt, &async) == ccltuneSuccess && async == ccltuneSuccess);
  RT_CHECK(ccltuneCommDestroy(rt) == ccltuneSuccess);
  ncclCommDestroy(nccl);
  std::printf("rank %d: %d calls on two streams, %d wrong\n", rank, 2 * kRounds, wrong);
  return wrong == 0 ? 0 : 1;
}

TEST(RuntimeGpu, TwoStreamsInTurnStayCorrect) {
  const int world = GpuWorldOrZero(1);
  if (world == 0) GTEST_SKIP() << "no GPU";
  RunWorld("runtime-two-streams", TwoStreamsRank, world);
}

// One all-reduce + epilogue call of the GPU test.
struct EpilogueCase {
  core::EpilogueKind kind;
  int hidden;
  Dtype dtype;
  std::uint64_t tokens;
  bool in_place;  // out is input
  bool pooled;    // input, out and residual from ccltuneMemAlloc
  bool graph;
};

std::vector<EpilogueCase> EpilogueCases() {
  std::vector<EpilogueCase> out;
  std::vector<TunedEpilogue> sizes = RuntimeTestEpilogues();
  // A hidden without any slice: NCCL + the separate kernel, whatever the winners.
  sizes.push_back({core::EpilogueKind::kResidualRmsNorm, 1032, 16, ""});
  for (const TunedEpilogue& s : sizes) {
    for (Dtype d : {Dtype::kFp32, Dtype::kFp16, Dtype::kBf16}) {
      // The tuned size, and an odd token count near it (two-shot's rows then split unevenly).
      for (std::uint64_t tokens : {s.tokens, s.tokens + 3}) {
        for (int variant = 0; variant < 4; ++variant) {
          out.push_back({s.kind, s.hidden, d, tokens, (variant & 1) != 0, (variant & 2) != 0,
                         ((variant + static_cast<int>(d)) & 1) != 0});
        }
      }
    }
  }
  return out;
}

class EpilogueRunner {
 public:
  EpilogueRunner(ccltuneComm_t rt, int rank, int world, cudaStream_t s)
      : rt_(rt), rank_(rank), world_(world), s_(s) {}

  // 0 when out (and residual) match the reference within the dtype's tolerance.
  int Run(const EpilogueCase& c, std::map<std::string, int>* ran) {
    const std::size_t bytes = c.tokens * c.hidden * core::DtypeSize(c.dtype);
    void* buf[3] = {};  // input, out, residual
    for (int i = 0; i < 3; ++i) {
      if (i == 1 && c.in_place) continue;
      if (c.pooled) {
        RT_CHECK(ccltuneMemAlloc(rt_, &buf[i], bytes) == ccltuneSuccess);
      } else {
        RT_CHECK(cudaMalloc(&buf[i], bytes) == cudaSuccess);
      }
    }
    if (c.in_place) buf[1] = buf[0];
    void *weight = nullptr, *want_out = nullptr, *want_res = nullptr;
    RT_CHECK(cudaMalloc(&weight, c.hidden * core::DtypeSize(c.dtype)) == cudaSuccess);
    RT_CHECK(cudaMalloc(&want_out, bytes) == cudaSuccess &&
             cudaMalloc(&want_res, bytes) == cudaSuccess);
    const int rc = Check(c, buf[0], buf[1], buf[2], weight, want_out, want_res, ran);
    for (int i = 0; i < 3; ++i) {
      if (i == 1 && c.in_place) continue;
      if (c.pooled) {
        RT_CHECK(ccltuneMemFree(rt_, buf[i]) == ccltuneSuccess);
      } else {
        cudaFree(buf[i]);
      }
    }
    cudaFree(weight);
    cudaFree(want_out);
    cudaFree(want_res);
    return rc;
  }

 private:
  bool Norm(const EpilogueCase& c) const { return c.kind == core::EpilogueKind::kResidualRmsNorm; }

  int Launch(const EpilogueCase& c, const void* in, void* out, void* residual, const void* weight) {
    const ncclDataType_t t = NcclOf(c.dtype);
    const ccltuneResult_t r =
        Norm(c) ? ccltuneAllReduceResidualRmsNorm(in, residual, weight, out, c.tokens, c.hidden,
                                                  kEps, t, rt_, s_)
                : ccltuneAllReduceBias(in, weight, out, c.tokens, c.hidden, t, rt_, s_);
    RT_CHECK(r == ccltuneSuccess);
    return 0;
  }

  int Fill(const EpilogueCase& c, void* in, void* residual, void* weight, void* want_out,
           void* want_res) {
    const std::uint64_t n = c.tokens * c.hidden;
    ++gen_;
    RT_CHECK(kernels::LaunchRandomFill(in, n, c.dtype, rank_, gen_, 0, s_) == cudaSuccess);
    RT_CHECK(kernels::LaunchRandomFill(weight, c.hidden, c.dtype, kernels::kWeightFillRank, gen_, 0,
                                       s_) == cudaSuccess);
    if (Norm(c)) {
      RT_CHECK(kernels::LaunchRandomFill(residual, n, c.dtype, kernels::kResidualFillRank, gen_, 0,
                                         s_) == cudaSuccess);
    }
    kernels::EpilogueParams p;
    p.op = Norm(c) ? kernels::EpilogueOp::kResidualRmsNorm : kernels::EpilogueOp::kBias;
    p.hidden = c.hidden;
    p.eps = kEps;
    RT_CHECK(kernels::LaunchEpilogueExpected(p, want_out, want_res, c.tokens, world_, gen_, c.dtype,
                                             s_) == cudaSuccess);
    return 0;
  }

  int RunOnce(const EpilogueCase& c, const void* in, void* out, void* residual,
              const void* weight) {
    if (!c.graph) return Launch(c, in, out, residual, weight);
    cudaGraph_t g = nullptr;
    cudaGraphExec_t ge = nullptr;
    RT_CHECK(cudaStreamBeginCapture(s_, cudaStreamCaptureModeGlobal) == cudaSuccess);
    const int launched = Launch(c, in, out, residual, weight);
    RT_CHECK(cudaStreamEndCapture(s_, &g) == cudaSuccess && launched == 0);
    RT_CHECK(cudaGraphInstantiate(&ge, g, 0) == cudaSuccess);
    RT_CHECK(cudaGraphLaunch(ge, s_) == cudaSuccess);
    RT_CHECK(cudaStreamSynchronize(s_) == cudaSuccess);
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    return 0;
  }

  int Check(const EpilogueCase& c, void* in, void* out, void* residual, void* weight,
            void* want_out, void* want_res, std::map<std::string, int>* ran) {
    RT_CHECK(Fill(c, in, residual, weight, want_out, want_res) == 0);
    RT_CHECK(RunOnce(c, in, out, residual, weight) == 0);
    kernels::Mismatch* mm = nullptr;
    RT_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&mm), 2 * sizeof(*mm), cudaHostAllocMapped) ==
             cudaSuccess);
    mm[1].index = ~0ull;
    const std::uint64_t n = c.tokens * c.hidden;
    const double tol = core::VerifyTolerance(c.dtype);
    RT_CHECK(kernels::LaunchCompare(out, want_out, n, c.dtype, tol, &mm[0], s_) == cudaSuccess);
    if (Norm(c)) {
      RT_CHECK(kernels::LaunchCompare(residual, want_res, n, c.dtype, tol, &mm[1], s_) ==
               cudaSuccess);
    }
    RT_CHECK(cudaStreamSynchronize(s_) == cudaSuccess);
    const bool ok = mm[0].index == ~0ull && mm[1].index == ~0ull;
    char name[256] = {};
    RT_CHECK(ccltuneGetEpilogueChoice(
                 rt_, Norm(c) ? ccltuneEpilogueResidualRmsNorm : ccltuneEpilogueBias, c.hidden,
                 NcclOf(c.dtype), c.tokens, c.pooled, name, sizeof(name)) == ccltuneSuccess);
    ++(*ran)[name];
    if (!ok) {
      const kernels::Mismatch& m = mm[0].index != ~0ull ? mm[0] : mm[1];
      std::fprintf(stderr,
                   "WRONG %s hidden=%d %s tokens=%llu in_place=%d pooled=%d graph=%d via %s: "
                   "%s[%llu] %g vs %g\n",
                   core::EpilogueKindName(c.kind), c.hidden, core::DtypeName(c.dtype),
                   static_cast<unsigned long long>(c.tokens), c.in_place, c.pooled, c.graph, name,
                   &m == &mm[0] ? "out" : "residual", m.index, m.got, m.want);
    }
    cudaFreeHost(mm);
    return ok ? 0 : 1;
  }

  static constexpr float kEps = 1e-5f;
  ccltuneComm_t rt_;
  int rank_;
  int world_;
  cudaStream_t s_;
  std::uint64_t gen_ = 0;
};

// Bad arguments fail on every rank alike before anything is enqueued: no peer waits.
int BadEpilogueArguments(ccltuneComm_t rt, cudaStream_t s) {
  void* buf = nullptr;
  RT_CHECK(cudaMalloc(&buf, 1 << 20) == cudaSuccess);
  char* b = static_cast<char*>(buf);
  RT_CHECK(ccltuneAllReduceResidualRmsNorm(b, b + 65536, b + 131072, b, 4, 100, 1e-5f, ncclBfloat16,
                                           rt, s) == ccltuneInvalidArgument);
  RT_CHECK(std::string(ccltuneGetLastError()).find("hidden=100") != std::string::npos);
  RT_CHECK(ccltuneAllReduceBias(b + 8, b + 131072, b + 8, 4, 64, ncclBfloat16, rt, s) ==
           ccltuneInvalidArgument);
  RT_CHECK(std::string(ccltuneGetLastError()).find("input: not 16-byte") != std::string::npos);
  RT_CHECK(ccltuneAllReduceBias(b, b + 131072, b, 4, 64, ncclInt32, rt, s) ==
           ccltuneInvalidArgument);
  cudaFree(buf);
  return 0;
}

int EpilogueRank(const std::string& dir, int rank, int world, bool winners) {
  ncclComm_t nccl = nullptr;
  ccltuneComm_t rt = nullptr;
  RT_CHECK(StartRank(dir, rank, world, winners, -1, &nccl, &rt));
  cudaStream_t s = nullptr;
  RT_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  RT_CHECK(BadEpilogueArguments(rt, s) == 0);
  EpilogueRunner runner(rt, rank, world, s);
  std::map<std::string, int> ran;
  int wrong = 0, total = 0;
  for (const EpilogueCase& c : EpilogueCases()) {
    wrong += runner.Run(c, &ran);
    ++total;
  }
  ccltuneResult_t async = ccltuneSuccess;
  RT_CHECK(ccltuneCommGetAsyncError(rt, &async) == ccltuneSuccess && async == ccltuneSuccess);
  RT_CHECK(ccltuneCommDestroy(rt) == ccltuneSuccess);
  ncclCommDestroy(nccl);
  std::printf("rank %d: %d epilogue cases, %d wrong; ran:", rank, total, wrong);
  for (const auto& [name, n] : ran) std::printf(" %s x%d;", name.c_str(), n);
  std::printf("\n");
  return wrong == 0 ? 0 : 1;
}

TEST(RuntimeGpu, EpilogueOpsMatchTheReferenceOnEveryPath) {
  const int world = MultiGpuWorldOrZero();
  if (world == 0) GTEST_SKIP() << "needs 2 GPUs (the fused kernels run on 2-8 ranks)";
  RunWorld(
      "runtime-epilogue",
      [](const std::string& d, int r, int w) { return EpilogueRank(d, r, w, true); }, world);
}

TEST(RuntimeGpu, EpilogueOpsWithoutWinnersRunNcclAndTheSeparateKernel) {
  const int world = MultiGpuWorldOrZero();
  if (world == 0) GTEST_SKIP() << "needs 2 GPUs";
  RunWorld(
      "runtime-epilogue-nccl-only",
      [](const std::string& d, int r, int w) { return EpilogueRank(d, r, w, false); }, world);
}

int BadConfigRank(const std::string& dir, int rank, int world) {
  RT_CHECK(cudaSetDevice(rank) == cudaSuccess);
  ncclComm_t nccl = SharedNcclComm(dir, rank, world);
  RT_CHECK(nccl != nullptr);
  ccltuneConfig_t cfg = CCLTUNE_CONFIG_INITIALIZER;
  cfg.timeoutMs = 1;
  ccltuneComm_t rt = nullptr;
  RT_CHECK(ccltuneCommInit(nccl, &cfg, &rt) == ccltuneInvalidArgument && rt == nullptr);
  RT_CHECK(std::string(ccltuneGetLastError()).find("timeoutMs=1") != std::string::npos);
  cfg = CCLTUNE_CONFIG_INITIALIZER;
  cfg.fingerprint = "Not A Fingerprint";
  RT_CHECK(ccltuneCommInit(nccl, &cfg, &rt) == ccltuneInvalidArgument);
  RT_CHECK(std::string(ccltuneGetLastError()).find("ccltuneConfig_t.fingerprint") !=
           std::string::npos);
  ncclCommDestroy(nccl);
  return 0;
}

TEST(RuntimeGpu, BadConfigIsOneClearError) {
  const int world = GpuWorldOrZero(1);
  if (world == 0) GTEST_SKIP() << "no GPU";
  RunWorld("runtime-bad-config", BadConfigRank, 1);
}

// Rank 1 never calls ccltuneCommInit: rank 0's init must give up within its timeout.
int AbsentPeerRank(const std::string& dir, int rank, int world) {
  RT_CHECK(cudaSetDevice(rank) == cudaSuccess);
  ncclComm_t nccl = SharedNcclComm(dir, rank, world);
  RT_CHECK(nccl != nullptr);
  if (rank != 0) {
    std::this_thread::sleep_for(std::chrono::seconds(6));
    std::_Exit(0);  // leaves without NCCL teardown: the peer is gone
  }
  ccltuneConfig_t cfg = CCLTUNE_CONFIG_INITIALIZER;
  cfg.timeoutMs = 2000;
  ccltuneComm_t rt = nullptr;
  const auto start = std::chrono::steady_clock::now();
  const ccltuneResult_t r = ccltuneCommInit(nccl, &cfg, &rt);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("init without its peer: %s after %.2f s (%s)\n", ccltuneGetErrorString(r), s,
              ccltuneGetLastError());
  RT_CHECK(r == ccltuneTimeout && s < 5);
  std::_Exit(0);  // the NCCL communicator has a pending collective: no clean teardown
}

TEST(RuntimeGpu, AbsentPeerIsABoundedError) {
  const int world = MultiGpuWorldOrZero();
  if (world == 0) GTEST_SKIP() << "needs 2 GPUs";
  RunWorld("runtime-absent-peer", AbsentPeerRank, 2);
}

// The last rank exits hard after a few all-reduces of the LL winner's size (2 KiB bf16);
// each survivor's next one must stop its GPU context (the sync fails) within the timeout
// + 5 s, no call may complete after the death, and the communicator names the dead rank.
constexpr int kDeathTimeoutMs = 3000;

int PeerDeathRank(const std::string& dir, int rank, int world) {
  ncclComm_t nccl = nullptr;
  ccltuneComm_t rt = nullptr;
  RT_CHECK(StartRank(dir, rank, world, true, -1, &nccl, &rt, kDeathTimeoutMs));
  cudaStream_t s = nullptr;
  RT_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  constexpr std::size_t kBytes = 2048;
  void* buf = nullptr;
  RT_CHECK(cudaMalloc(&buf, kBytes) == cudaSuccess && cudaMemset(buf, 0, kBytes) == cudaSuccess);
  char choice[128] = {};
  RT_CHECK(ccltuneGetChoice(rt, ccltuneAllReduceOp, ncclBfloat16, ncclSum, kBytes, 0, choice,
                            sizeof choice) == ccltuneSuccess);
  RT_CHECK(std::string(choice).find("mode=ll") != std::string::npos);
  auto call = [&] { return ccltuneAllReduce(buf, buf, kBytes / 2, ncclBfloat16, ncclSum, rt, s); };
  for (int i = 0; i < 5; ++i) {
    RT_CHECK(call() == ccltuneSuccess && cudaStreamSynchronize(s) == cudaSuccess);
  }
  if (rank == world - 1) std::_Exit(0);  // the peer dies: no teardown of anything
  const auto death = std::chrono::steady_clock::now();
  const auto give_up = death + std::chrono::milliseconds(kDeathTimeoutMs + 20000);
  ccltuneResult_t r = ccltuneSuccess;
  cudaError_t e = cudaSuccess;
  int completed = 0;
  while (std::chrono::steady_clock::now() < give_up) {
    r = call();
    if (r != ccltuneSuccess) break;
    e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) break;
    ++completed;
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - death).count();
  ccltuneResult_t async = ccltuneSuccess;
  RT_CHECK(ccltuneCommGetAsyncError(rt, &async) == ccltuneSuccess);
  const std::string text = ccltuneGetLastError();
  std::printf(
      "rank %d: %s stopped after %.2f s, %d calls completed after the death: call %s, "
      "sync %s; async %s: %s\n",
      rank, choice, secs, completed, ccltuneGetErrorString(r), cudaGetErrorName(e),
      ccltuneGetErrorString(async), text.c_str());
  RT_CHECK(r != ccltuneSuccess || e != cudaSuccess);
  RT_CHECK(completed == 0);
  RT_CHECK(secs < kDeathTimeoutMs / 1000.0 + 5);
  RT_CHECK(async == ccltuneTimeout);
  RT_CHECK(text.find("rank(s) " + std::to_string(world - 1) + " did not arrive within 3000 ms") !=
           std::string::npos);
  std::_Exit(0);  // the GPU context has failed: no teardown
}

TEST(RuntimeGpu, APeerThatDiesStopsEverySurvivor) {
  const int world = MultiGpuWorldOrZero();
  if (world == 0) GTEST_SKIP() << "needs 2 GPUs";
  RunWorld("runtime-peer-death", PeerDeathRank, world);
}

// Lines of this rank's log (its stdout and stderr, rank_harness.h) holding every one of
// `parts`; the first such line in *first.
int LogLines(const std::string& dir, int rank, const std::vector<std::string>& parts,
             std::string* first) {
  std::fflush(stdout);  // NCCL writes its log to stdout
  std::ifstream log(dir + "/rank" + std::to_string(rank) + ".log");
  int n = 0;
  for (std::string line; std::getline(log, line);) {
    bool all = true;
    for (const auto& p : parts) all &= line.find(p) != std::string::npos;
    if (!all) continue;
    if (n++ == 0) *first = line;
  }
  return n;
}

// One rank of 2 emulated nodes x 2 with the hier winners (peer_memory 0: the node team cannot
// be built). Every result is checked against NCCL's; the calls that ran hier are counted from
// NCCL's own log (an all-reduce on 2 ranks is only ever hier's phase across the nodes here).
int HierRank(const std::string& dir, int rank, int world, int peer_memory) {
  const char* node = rank < world / 2 ? "hier-node-a" : "hier-node-b";
  setenv("CCLTUNE_NODE_NAME", node, 1);  // before NCCL's first init: it hashes NCCL_HOSTID then
  setenv("NCCL_HOSTID", node, 1);
  setenv("NCCL_DEBUG", "INFO", 1);
  setenv("NCCL_DEBUG_SUBSYS", "INIT,COLL", 1);
  ncclComm_t nccl = nullptr;
  ccltuneComm_t rt = nullptr;
  RT_CHECK(
      StartRank(dir, rank, world, true, peer_memory, &nccl, &rt, 20000, HierTestResults(world)));
  std::string line;
  const std::string summary = peer_memory == 0
                                  ? "hierarchical all-reduce off (peer memory turned off"
                                  : "hierarchical all-reduce on (2 nodes x 2 ranks)";
  std::string summary_line;
  if (rank == 0) {
    RT_CHECK(LogLines(dir, 0, {"ccltune: rank 0 of 4", summary}, &summary_line) == 1);
  }
  cudaStream_t s = nullptr;
  RT_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  RankRunner runner(rt, nccl, rank, world, s);
  std::map<std::string, int> ran;
  int wrong = 0, total = 0, hier_calls = 0;
  for (const Case& c : CasesOf(HierTestSizes(), world, true)) {
    wrong += runner.Run(c, &ran);
    ++total;
    char name[256] = {};
    RT_CHECK(ccltuneGetChoice(rt, CcltuneOf(c.op), NcclOf(c.dtype), NcclOf(c.redop), c.bytes,
                              c.pooled, name, sizeof(name)) == ccltuneSuccess);
    // An odd count falls back to NCCL at the call (the node's 2 ranks cannot split it).
    hier_calls += std::string(name) == kHierTestChoice && CountOf(c, world) % 2 == 0;
  }
  ccltuneResult_t async = ccltuneSuccess;
  RT_CHECK(ccltuneCommGetAsyncError(rt, &async) == ccltuneSuccess && async == ccltuneSuccess);
  RT_CHECK(ccltuneCommDestroy(rt) == ccltuneSuccess);
  ncclCommDestroy(nccl);
  const int logged = LogLines(dir, rank, {"NCCL INFO AllReduce: ", "[nranks=2]"}, &line);
  char head[256];
  std::snprintf(head, sizeof head,
                "rank %d (%s): %d cases, %d wrong; %d should run hier, NCCL logged %d "
                "all-reduces of 2 ranks; ran:",
                rank, node, total, wrong, hier_calls, logged);
  std::string text = head;
  for (const auto& [name, n] : ran) text += " " + name + " x" + std::to_string(n) + ";";
  if (logged > 0) text += "\n  NCCL's first: " + line;
  // Why a case counted as wrong: a call that failed, or a result that differs.
  for (const char* what : {"FAILED ", "WRONG "}) {
    std::string first;
    const int n = LogLines(dir, rank, {what}, &first);
    if (n > 0) text += "\n  " + std::to_string(n) + " x " + what + "; first: " + first;
  }
  if (!summary_line.empty()) text += "\n  init: " + summary_line;
  std::printf("%s\n", text.c_str());
  // The figures of a passing run too (the harness keeps only failed ranks' logs).
  WriteSummary(std::string(peer_memory == 0 ? "runtime-hier-peer-off" : "runtime-hier") + "-rank" +
                   std::to_string(rank) + ".txt",
               text + "\n");
  RT_CHECK(peer_memory == 0 ? hier_calls == 0 : hier_calls > 0);
  return wrong == 0 && logged == hier_calls ? 0 : 1;
}

constexpr int kHierWorld = 4;  // 2 emulated nodes x 2

TEST(RuntimeGpu, HierarchicalWinnersRunOnTwoEmulatedNodesAndMatchNccl) {
  if (GpuWorldOrZero(kHierWorld) == 0) GTEST_SKIP() << "needs 4 GPUs (2 emulated nodes x 2)";
  RunWorld(
      "runtime-hier", [](const std::string& d, int r, int w) { return HierRank(d, r, w, -1); },
      kHierWorld);
}

TEST(RuntimeGpu, HierarchicalWinnersWithoutANodeTeamFallBackCorrectly) {
  if (GpuWorldOrZero(kHierWorld) == 0) GTEST_SKIP() << "needs 4 GPUs (2 emulated nodes x 2)";
  RunWorld(
      "runtime-hier-peer-off",
      [](const std::string& d, int r, int w) { return HierRank(d, r, w, 0); }, kHierWorld);
}

}  // namespace
}  // namespace ccltune::testing

// runtime_bench: libccltune's ops timed the way `ccltune tune` times a choice (docs/design.md §2:
// gate, device barrier, CUDA events around `iters` launches or one graph replay of them,
// max over ranks, median of rounds), side by side with NCCL timed the same way, for every
// allReduce size of a winners file, so "the runtime within 5 % of the time tune measured
// for that winner" is compared like for like. One process per GPU, buffers from the
// runtime's pool (out of place). Eager rounds also time the host: the enqueue loop runs while
// the GPU waits at the gate, so its time per op is the host's alone (median of rounds,
// rank 0). Not a test: it prints figures.
//
//   runtime_bench WINNERS.json [--graph] [--gpus N] [--iters 20] [--rounds 5]
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ccltune.h"
#include "core/kernels/kernels.h"
#include "tests/gpu/gpu_test_env.h"
#include "tests/gpu/nccl_rank.h"
#include "tests/gpu/rank_harness.h"

namespace ccltune::testing {
namespace {

struct Options {
  std::string winners;
  bool graph = false;
  int gpus = 0;
  int iters = 20;
  int rounds = 5;
};

struct Tuned {
  std::uint64_t bytes;
  std::string winner;
  double time_us;
  double default_us;
};

std::vector<Tuned> ReadWinners(const std::string& path) {
  std::vector<Tuned> out;
  std::ifstream f(path);
  const auto j = nlohmann::json::parse(f, nullptr, false);
  if (!j.is_array()) return out;
  for (const auto& r : j) {
    if (r.value("op", "") == "allReduce" && r.value("dtype", "") == "bf16" &&
        r.value("redop", "") == "sum") {
      out.push_back({r["bytes"].get<std::uint64_t>(), r["winner"].get<std::string>(),
                     r["timeUs"].get<double>(), r["defaultTimeUs"].get<double>()});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Tuned& a, const Tuned& b) { return a.bytes < b.bytes; });
  return out;
}

class Timer {
 public:
  Timer(ncclComm_t nccl, cudaStream_t s, const Options& o) : nccl_(nccl), s_(s), o_(o) {
    cudaHostAlloc(reinterpret_cast<void**>(&flags_), 4 * sizeof(int), cudaHostAllocMapped);
    cudaHostGetDevicePointer(reinterpret_cast<void**>(&dflags_), flags_, 0);
    cudaMalloc(&word_, sizeof(double));
    cudaEventCreate(&start_);
    cudaEventCreate(&end_);
  }

  // Median over rounds of the max over ranks of one op's time (us); -1 on failure. Eager:
  // host_us() is then the median of rounds of this rank's host time per op.
  double Measure(const std::function<bool()>& op) {
    for (int i = 0; i < 3; ++i)
      if (!op()) return -1;
    cudaGraphExec_t exec = nullptr;
    if (o_.graph && !Capture(op, &exec)) return -1;
    std::vector<double> times, host;
    for (int r = 0; r < o_.rounds; ++r) {
      flags_[0] = 0;
      kernels::LaunchBoundedSpin(dflags_, 2000000000ull, dflags_ + 1, s_);
      float* w = static_cast<float*>(word_);
      ncclAllReduce(w, w, 1, ncclFloat32, ncclSum, nccl_, s_);  // the device barrier
      cudaEventRecord(start_, s_);
      if (exec != nullptr) {
        cudaGraphLaunch(exec, s_);
      } else {
        const auto h0 = std::chrono::steady_clock::now();
        for (int i = 0; i < o_.iters; ++i)
          if (!op()) return -1;
        host.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0)
                .count() /
            o_.iters);
      }
      cudaEventRecord(end_, s_);
      flags_[0] = 1;  // the gate opens: every launch of the round is queued behind it
      cudaStreamSynchronize(s_);
      float ms = 0;
      cudaEventElapsedTime(&ms, start_, end_);
      times.push_back(MaxOverRanks(ms * 1000.0 / o_.iters));
    }
    if (exec != nullptr) cudaGraphExecDestroy(exec);
    std::sort(host.begin(), host.end());
    host_us_ = host.empty() ? -1 : host[host.size() / 2];
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  }
  double host_us() const { return host_us_; }

 private:
  bool Capture(const std::function<bool()>& op, cudaGraphExec_t* exec) {
    cudaGraph_t g = nullptr;
    cudaStreamBeginCapture(s_, cudaStreamCaptureModeThreadLocal);
    bool ok = true;
    for (int i = 0; i < o_.iters && ok; ++i) ok = op();
    if (cudaStreamEndCapture(s_, &g) != cudaSuccess || !ok) return false;
    const bool made = cudaGraphInstantiate(exec, g, 0) == cudaSuccess;
    cudaGraphDestroy(g);
    return made;
  }

  double MaxOverRanks(double v) {
    cudaMemcpyAsync(word_, &v, sizeof(v), cudaMemcpyHostToDevice, s_);
    ncclAllReduce(word_, word_, 1, ncclFloat64, ncclMax, nccl_, s_);
    cudaMemcpyAsync(&v, word_, sizeof(v), cudaMemcpyDeviceToHost, s_);
    cudaStreamSynchronize(s_);
    return v;
  }

  ncclComm_t nccl_;
  cudaStream_t s_;
  const Options& o_;
  int* flags_ = nullptr;
  int* dflags_ = nullptr;
  void* word_ = nullptr;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t end_ = nullptr;
  double host_us_ = -1;
};

int RankMain(const Options& o, const std::string& dir, int rank, int world) {
  cudaSetDevice(rank);
  ncclComm_t nccl = SharedNcclComm(dir, rank, world);
  if (nccl == nullptr) return 2;
  const std::vector<Tuned> sizes = ReadWinners(o.winners);
  if (sizes.empty()) return 3;
  ccltuneConfig_t cfg = CCLTUNE_CONFIG_INITIALIZER;
  cfg.resultsFile = o.winners.c_str();
  cfg.poolBytes = 2 * sizes.back().bytes + (16u << 20);
  cfg.stagingBytes = std::size_t{1} << 30;
  ccltuneComm_t rt = nullptr;
  if (ccltuneCommInit(nccl, &cfg, &rt) != ccltuneSuccess) {
    std::fprintf(stderr, "init: %s\n", ccltuneGetLastError());
    return 4;
  }
  cudaStream_t s = nullptr;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  void *send = nullptr, *recv = nullptr;
  ccltuneMemAlloc(rt, &send, sizes.back().bytes);
  ccltuneMemAlloc(rt, &recv, sizes.back().bytes);
  kernels::LaunchRandomFill(send, sizes.back().bytes / 2, core::Dtype::kBf16, rank, 1, 0, s);
  Timer timer(nccl, s, o);
  std::ostringstream table;
  for (const Tuned& t : sizes) {
    const std::size_t count = t.bytes / 2;
    const double rt_us = timer.Measure([&] {
      return ccltuneAllReduce(send, recv, count, ncclBfloat16, ncclSum, rt, s) == ccltuneSuccess;
    });
    const double rt_host = timer.host_us();
    const double nccl_us = timer.Measure([&] {
      return ncclAllReduce(send, recv, count, ncclBfloat16, ncclSum, nccl, s) == ncclSuccess;
    });
    char name[256] = {};
    ccltuneGetChoice(rt, ccltuneAllReduceOp, ncclBfloat16, ncclSum, t.bytes, 1, name, sizeof(name));
    char line[512];
    std::snprintf(line, sizeof(line),
                  "| %llu | %s | %.2f | %.2f | %.3f | %.2f | %.2f | %.3f | %.2f | %.2f |\n",
                  static_cast<unsigned long long>(t.bytes), name, t.time_us, rt_us,
                  rt_us / t.time_us, t.default_us, nccl_us, nccl_us / t.default_us, rt_host,
                  timer.host_us());
    table << line;
  }
  if (rank == 0) {  // the parent prints it (ranks' stdout goes to their logs)
    std::ofstream(dir + "/table.md")
        << (o.graph ? "graph" : "eager") << ", " << world << " ranks: us per op, median of "
        << o.rounds << " rounds of " << o.iters << " ops, max over ranks\n"
        << "| bytes | runtime runs | tune's time | runtime | runtime / tune | tune's nccl | "
           "nccl here | nccl here / tune | runtime host/op | nccl host/op |\n"
           "|---|---|---|---|---|---|---|---|---|---|\n"
        << table.str();
  }
  ccltuneCommDestroy(rt);
  ncclCommDestroy(nccl);
  return 0;
}

}  // namespace
}  // namespace ccltune::testing

int main(int argc, char** argv) {
  using namespace ccltune::testing;
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--graph")
      o.graph = true;
    else if (a == "--gpus" && i + 1 < argc)
      o.gpus = std::atoi(argv[++i]);
    else if (a == "--iters" && i + 1 < argc)
      o.iters = std::atoi(argv[++i]);
    else if (a == "--rounds" && i + 1 < argc)
      o.rounds = std::atoi(argv[++i]);
    else if (o.winners.empty() && a[0] != '-')
      o.winners = a;
    else {
      std::fprintf(stderr, "runtime_bench: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (o.winners.empty()) {
    std::fprintf(stderr, "usage: runtime_bench WINNERS.json [--graph] [--gpus N]\n");
    return 2;
  }
  std::string why;
  const int gpus = o.gpus > 0 ? o.gpus : ProbeGpuCount(&why);
  if (gpus < 1) {
    std::printf("SKIP: no GPU (%s)\n", why.c_str());
    return 0;
  }
  GpuTestDir dir("runtime-bench");
  const auto outcomes =
      RunRanks(gpus, dir.path(), 550, [&](int r) { return RankMain(o, dir.path(), r, gpus); });
  bool ok = true;
  for (const auto& x : outcomes) ok = ok && x.exit_code == 0;
  std::ifstream table(dir.path() + "/table.md");
  std::printf("%s", std::string(std::istreambuf_iterator<char>(table), {}).c_str());
  if (!ok) std::printf("%s", Describe(outcomes).c_str());
  return ok ? 0 : 1;
}

// What the unfused path adds after an all-reduce, on one GPU: the separate residual add +
// RMSNorm kernel (kernels::LaunchEpilogue, as vLLM's fused_add_rms_norm does it) at issue
// 16's shapes, bf16. Timed as ccltune times a choice: a CUDA graph of 20 launches (and 20
// eager launches), CUDA events, median of 7 rounds; buffers rotate so the working set
// exceeds L2. A benchmark: prints a Markdown table, asserts nothing.
//   epilogue_kernel_bench [--hidden 4096,8192] [--tokens 1,8,32,128,512,2048]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "core/kernels/epilogue_kernels.h"
#include "core/kernels/kernels.h"

namespace {

using ccltune::core::Dtype;
namespace kernels = ccltune::kernels;

constexpr int kIters = 20;
constexpr int kRounds = 7;
constexpr std::size_t kRotateBytes = 256ull << 20;  // > 2x the H100's and H200's L2

#define CHECK(expr)                                                          \
  do {                                                                       \
    const cudaError_t e_ = (expr);                                           \
    if (e_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "%s: %s\n", #expr, cudaGetErrorString(e_));       \
      std::exit(2);                                                          \
    }                                                                        \
  } while (0)

std::vector<std::uint64_t> List(const char* text) {
  std::vector<std::uint64_t> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoull(item));
  return out;
}

struct Shape {
  std::uint64_t tokens;
  int hidden;
};

// Median µs per launch of kIters launches of `launch(slot)`, graph or eager.
template <class F>
double Time(F launch, int slots, bool graph, cudaStream_t s) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  cudaGraphExec_t exec = nullptr;
  int next = 0;
  auto enqueue = [&] {
    for (int i = 0; i < kIters; ++i) CHECK(launch(next++ % slots));
  };
  if (graph) {
    cudaGraph_t g;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    enqueue();
    CHECK(cudaStreamEndCapture(s, &g));
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaGraphDestroy(g));
  }
  std::vector<double> us;
  for (int r = -1; r < kRounds; ++r) {  // round -1 warms up
    CHECK(cudaEventRecord(a, s));
    if (graph) {
      CHECK(cudaGraphLaunch(exec, s));
    } else {
      enqueue();
    }
    CHECK(cudaEventRecord(b, s));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    if (r >= 0) us.push_back(ms * 1e3 / kIters);
  }
  if (exec) CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

void Row(const Shape& sh, cudaStream_t s) {
  const std::size_t bytes = sh.tokens * sh.hidden * 2;
  const std::size_t stride = (bytes + 4095) / 4096 * 4096;
  const int slots = static_cast<int>(std::clamp<std::size_t>(kRotateBytes / (2 * stride), 1, 64));
  char *reduced, *residual, *weight;
  CHECK(cudaMalloc(&reduced, stride * slots));
  CHECK(cudaMalloc(&residual, stride * slots));
  CHECK(cudaMalloc(&weight, sh.hidden * 2));
  CHECK(kernels::LaunchRandomFill(reduced, stride * slots / 2, Dtype::kBf16, 0, 1, 0, s));
  CHECK(kernels::LaunchRandomFill(residual, stride * slots / 2, Dtype::kBf16,
                                  kernels::kResidualFillRank, 1, 0, s));
  CHECK(kernels::LaunchRandomFill(weight, sh.hidden, Dtype::kBf16, kernels::kWeightFillRank, 1, 0,
                                  s));
  kernels::EpilogueParams p;
  p.hidden = sh.hidden;
  p.weight = weight;
  auto launch = [&](int k) {
    char* x = reduced + stride * k;  // normalised in place, as the unfused path runs it
    return kernels::LaunchEpilogue(p, x, residual + stride * k, x, sh.tokens, Dtype::kBf16, s);
  };
  const double graph = Time(launch, slots, true, s);
  const double eager = Time(launch, slots, false, s);
  // Bytes through memory: read the sum, the residual (and the weight), write both back.
  const double moved = 4.0 * bytes + sh.hidden * 2;
  std::printf("| %d | %llu | %.2f | %.2f | %.0f |\n", sh.hidden,
              static_cast<unsigned long long>(sh.tokens), graph, eager, moved / (graph * 1e3));
  CHECK(cudaFree(reduced));
  CHECK(cudaFree(residual));
  CHECK(cudaFree(weight));
}

}  // namespace

int main(int argc, char** argv) {
  const char* hidden = "4096,8192";
  const char* tokens = "1,8,32,128,512,2048";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--hidden") {
      hidden = argv[i + 1];
    } else if (flag == "--tokens") {
      tokens = argv[i + 1];
    } else {
      std::fprintf(stderr, "unknown flag %s (--hidden LIST, --tokens LIST)\n", argv[i]);
      return 2;
    }
  }
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("epilogue_kernel_bench: no GPU, nothing measured\n");
    return 0;
  }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::printf("separate residual add + RMSNorm, bf16, %s, us per launch (median of %d rounds "
              "of %d)\n\n| hidden | tokens | graph | eager | GB/s (graph) |\n|---|---|---|---|---|\n",
              prop.name, kRounds, kIters);
  for (std::uint64_t h : List(hidden)) {
    for (std::uint64_t t : List(tokens)) Row({t, static_cast<int>(h)}, s);
  }
  CHECK(cudaStreamDestroy(s));
  return 0;
}

/* nccl_shim_bench: the host time libccltune-nccl adds to an ncclAllReduce call, side by side
 * in one process: the NCCL behind the shim called directly (dlsym on libnccl.so.2) against
 * the same call through the shim (run with LD_PRELOAD=libccltune-nccl.so), alternating.
 *   nccl_shim_bench fake [ITERS]  the tests' fake NCCL (FAKE_NCCL_QUIET=1): forwarded calls
 *   nccl_shim_bench gpu [ITERS]   the real NCCL, one rank on GPU 0: the call's enqueue time,
 *                                 forwarded or served by a winner (CCLTUNE_RESULTS_FILE)
 * Prints ns per call (median of rounds) and what the shim adds. Not a test: figures only.
 */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef ncclResult_t (*AllReduceFn)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t,
                                    ncclComm_t, cudaStream_t);
enum { kRounds = 9 };

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static int Cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

typedef struct {
  const char* name;
  ncclComm_t comm;
  size_t count;
  ncclDataType_t type;
  int in_group;
} Case;

static double Time(AllReduceFn fn, const Case* c, void* buf, cudaStream_t s, int iters, int gpu) {
  if (c->in_group) ncclGroupStart();
  double t0 = Now();
  for (int i = 0; i < iters; ++i) fn(buf, buf, c->count, c->type, ncclSum, c->comm, s);
  double t = (Now() - t0) / iters;
  if (c->in_group) ncclGroupEnd();
  if (gpu) cudaStreamSynchronize(s);
  return t;
}

static void Run(AllReduceFn direct, const Case* c, void* buf, cudaStream_t s, int iters, int gpu) {
  double d[kRounds], v[kRounds];
  Time(ncclAllReduce, c, buf, s, iters / 10 + 1, gpu); /* warm-up, and the context if any */
  for (int r = 0; r < kRounds; ++r) {
    d[r] = Time(direct, c, buf, s, iters, gpu);
    v[r] = Time(ncclAllReduce, c, buf, s, iters, gpu);
  }
  qsort(d, kRounds, sizeof d[0], Cmp);
  qsort(v, kRounds, sizeof v[0], Cmp);
  printf("| %-38s | %10.1f | %10.1f | %+9.1f |\n", c->name, d[kRounds / 2], v[kRounds / 2],
         v[kRounds / 2] - d[kRounds / 2]);
}

int main(int argc, char** argv) {
  const int gpu = argc > 1 && strcmp(argv[1], "gpu") == 0;
  const int iters = argc > 2 ? atoi(argv[2]) : (gpu ? 2000 : 200000);
  void* h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
  AllReduceFn direct = h ? (AllReduceFn)dlsym(h, "ncclAllReduce") : NULL;
  if (direct == NULL || direct == ncclAllReduce) {
    fprintf(stderr, "nccl_shim_bench: run with LD_PRELOAD=libccltune-nccl.so (direct NCCL %s)\n",
            direct == NULL ? "not found" : "is the preloaded one");
    return 2;
  }
  ncclUniqueId id;
  ncclComm_t comm = NULL, nonblocking = NULL;
  void* buf = NULL;
  cudaStream_t s = NULL;
  if (gpu) {
    cudaSetDevice(0);
    cudaStreamCreate(&s);
    cudaMalloc(&buf, 64 << 20);
  }
  ncclGetUniqueId(&id);
  ncclCommInitRank(&comm, 1, id, 0);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  if (!gpu) ncclCommInitRankConfig(&nonblocking, 1, id, 0, &config);
  printf("%s, %d calls a round, median of %d rounds\n\n", gpu ? "real NCCL, 1 GPU" : "fake NCCL",
         iters, kRounds);
  printf("| %-38s | direct ns | shim ns | added ns |\n|---|---:|---:|---:|\n", "call");
  const size_t k = 1024;
  Case cases[] = {
      {"allReduce fp32 4 KiB (served or NCCL's)", comm, k, ncclFloat32, 0},
      {"allReduce bf16 64 KiB", comm, 32 * k, ncclBfloat16, 0},
      {"allReduce u64 (type not tuned)", comm, k, ncclUint64, 0},
      {"allReduce fp32 4 KiB in a group", comm, k, ncclFloat32, 1},
      {"allReduce, non-blocking communicator", nonblocking, k, ncclFloat32, 0},
      {"allReduce, communicator not tracked", (ncclComm_t)(uintptr_t)0x99, k, ncclFloat32, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    if (gpu && (cases[i].comm == NULL || (uintptr_t)cases[i].comm == 0x99)) continue;
    Run(direct, &cases[i], buf, s, iters, gpu);
  }
  ncclCommDestroy(comm);
  if (nonblocking) ncclCommDestroy(nonblocking);
  return 0;
}

/* A small program linked against NCCL (the tests' fake), run with libccltune-nccl preloaded:
 * each scenario makes the calls whose forwarding nccl_shim_test.py checks (the fake's log
 * must hold every call unchanged; the shim's stderr must say why each was forwarded).
 *   shim_scenarios SCENARIO   (forwarding | lifecycle)
 */
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Every argument passed by address is static: with address randomisation off (the test runs
 * this under setarch -R) its address is the same with and without the shim preloaded. */
static float g_send[64], g_recv[64];
static ncclUniqueId g_id;
static ncclComm_t g_comm[4];
static ncclConfig_t g_config;
static int g_version;
static const cudaStream_t kStream = (cudaStream_t)(uintptr_t)0x5000;

static int Expect(ncclResult_t got, const char* what) {
  if (got == ncclSuccess) return 0;
  printf("FAILED %s: %d\n", what, (int)got);
  return 1;
}

/* Calls that must reach NCCL unchanged: each reason of the shim's summary once or more. */
static int Forwarding(void) {
  memset(&g_id, 7, sizeof g_id);
  int bad = Expect(ncclCommInitRank(&g_comm[0], 1, g_id, 0), "init");
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  g_config = config;
  g_config.blocking = 0;
  bad += Expect(ncclCommInitRankConfig(&g_comm[1], 1, g_id, 0, &g_config), "init config");
  ncclComm_t blocking = g_comm[0], nonblocking = g_comm[1];
  /* First eligible call: the shim tries a context (none can be had here) and forwards. */
  bad += Expect(ncclAllReduce(g_send, g_recv, 16, ncclFloat32, ncclSum, blocking, kStream), "ar");
  bad += Expect(ncclGroupStart(), "group start");
  bad += Expect(ncclAllReduce(g_send, g_recv, 17, ncclFloat32, ncclSum, blocking, kStream), "ar g");
  bad += Expect(ncclAllGather(g_send, g_recv, 4, ncclBfloat16, blocking, kStream), "ag g");
  bad += Expect(ncclGroupEnd(), "group end");
  bad += Expect(ncclAllReduce(g_send, g_recv, 18, ncclUint64, ncclSum, blocking, kStream), "u64");
  /* A user-defined op (ncclRedOpCreatePreMulSum's handles start at ncclNumOps). */
  bad += Expect(
      ncclAllReduce(g_send, g_recv, 19, ncclFloat32, (ncclRedOp_t)ncclNumOps, blocking, kStream),
      "user op");
  bad += Expect(ncclReduceScatter(g_send, g_recv, 5, ncclFloat16, ncclSum, nonblocking, kStream),
                "rs nb");
  bad += Expect(ncclAllReduce(g_send, g_recv, 0, ncclFloat32, ncclSum, blocking, kStream), "empty");
  bad += Expect(ncclBroadcast(g_send, g_recv, 8, ncclFloat32, 0, blocking, kStream), "bcast");
  bad += Expect(ncclCommDestroy(nonblocking), "destroy nb");
  bad += Expect(ncclCommDestroy(blocking), "destroy");
  return bad;
}

/* Split children inherit the parent's mode; abort and finalize say their summary. */
static int Lifecycle(void) {
  memset(&g_id, 9, sizeof g_id);
  int bad = Expect(ncclCommInitRank(&g_comm[0], 1, g_id, 0), "init");
  ncclComm_t parent = g_comm[0];
  bad += Expect(ncclCommSplit(parent, 0, 0, &g_comm[1], NULL), "split");
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  g_config = config;
  g_config.blocking = 0;
  bad += Expect(ncclCommSplit(parent, 0, 0, &g_comm[2], &g_config), "split nb");
  ncclComm_t child = g_comm[1], child_nb = g_comm[2];
  bad += Expect(ncclAllGather(g_send, g_recv, 3, ncclInt8, child_nb, kStream), "ag nb");
  bad += Expect(ncclCommFinalize(child), "finalize");
  bad += Expect(ncclCommDestroy(child), "destroy child");
  bad += Expect(ncclCommAbort(child_nb), "abort");
  bad += Expect(ncclCommDestroy(parent), "destroy");
  return bad;
}

/* One thread driving four ranks (issue 34): ncclCommInitAll, a group of one call per
 * communicator (held to ncclGroupEnd, then served or forwarded whole: forwarded here, no
 * context can be had), a group of two calls on one communicator (forwarded whole, in order),
 * then the four destroyed one after another, timed. */
static const int g_devs[4] = {0, 1, 2, 3};

static int OneProcess(void) {
  int bad = Expect(ncclCommInitAll(g_comm, 4, g_devs), "init all");
  bad += Expect(ncclGroupStart(), "group start");
  for (int i = 0; i < 4; ++i)
    bad += Expect(ncclAllReduce(g_send, g_recv, 32, ncclFloat32, ncclSum, g_comm[i], kStream),
                  "ar per comm");
  bad += Expect(ncclGroupEnd(), "group end");
  bad += Expect(ncclGroupStart(), "group start 2");
  bad += Expect(ncclAllReduce(g_send, g_recv, 8, ncclFloat32, ncclSum, g_comm[0], kStream), "ar");
  bad += Expect(ncclAllReduce(g_send, g_recv, 8, ncclFloat32, ncclSum, g_comm[0], kStream), "ar");
  bad += Expect(ncclGroupEnd(), "group end 2");
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < 4; ++i) bad += Expect(ncclCommDestroy(g_comm[i]), "destroy in turn");
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("destroyed 4 communicators one after another in %.3f s\n",
         (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  return bad;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: shim_scenarios forwarding|lifecycle|one-process\n");
    return 2;
  }
  if (ncclGetVersion(&g_version) != ncclSuccess) {
    printf("ncclGetVersion failed\n");
    return 1;
  }
  int bad = strcmp(argv[1], "forwarding") == 0    ? Forwarding()
            : strcmp(argv[1], "lifecycle") == 0   ? Lifecycle()
            : strcmp(argv[1], "one-process") == 0 ? OneProcess()
                                                  : (fprintf(stderr, "unknown scenario\n"), 2);
  printf("%s: %s\n", argv[1], bad == 0 ? "ok" : "failed");
  return bad == 0 ? 0 : 1;
}

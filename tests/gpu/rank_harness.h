// TEST HELPER: runs one test body per GPU rank in forked child processes, the way the
// product runs one process per GPU. The parent never touches CUDA (a process that
// initialized CUDA cannot hand a usable CUDA to its forked children), so even the GPU
// count is probed in a child.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace ccltune::testing {

// GPUs visible to a fresh process; 0 with `why` set when there are none or no driver.
int ProbeGpuCount(std::string* why);

// How many ranks a multi-GPU test uses: $CCLTUNE_GPU_TEST_RANKS, else every visible GPU.
int TestWorld(int visible);

// TestWorld of the visible GPUs when at least `min_gpus` are visible, else 0 after printing
// "SKIP: needs >= M GPUs, found N (why)" (the caller then GTEST_SKIPs: the skip must come
// from the test body).
int GpuWorldOrZero(int min_gpus);
inline int MultiGpuWorldOrZero() { return GpuWorldOrZero(2); }

// $CCLTUNE_GPU_TEST_SHARE_GPU=N (2..8): the tests that can share one GPU (they ask the three
// helpers below) run N ranks on GPU 0, each rank its own emulated node: NCCL refuses one GPU
// twice on one host, and across hosts it talks over sockets. So a one-GPU machine checks what
// needs no peer memory (the runtime's in-program trial, rs+ag, NCCL on communicators of its
// own); no time from it is NVLink's. 0 when unset; a value out of range is 0 with a line.
int SharedGpuRanks();
// SharedGpuRanks() when set (and a GPU is visible), else GpuWorldOrZero(min_gpus).
int SharedOrGpuWorldOrZero(int min_gpus);
// In rank r's process, before NCCL's first call: its CUDA device (0 when sharing, else r),
// and when sharing its emulated node (NCCL_HOSTID and CCLTUNE_NODE_NAME "share-gpu-R").
int EnterRankDevice(int rank);

struct RankOutcome {
  int exit_code = -1;      // the body's return value; 128+N when killed by signal N
  bool timed_out = false;  // the harness killed it at the deadline
  double seconds = 0;      // from fork to exit
  std::string log_tail;    // last lines of its stdout/stderr
};

// Forks `world` children; child r runs body(r) with output in <dir>/rank<r>.log and exits
// with its return value. Waits up to `timeout_s` for all, then SIGKILLs the rest.
std::vector<RankOutcome> RunRanks(int world, const std::string& dir, double timeout_s,
                                  const std::function<int(int rank)>& body);

// "rank 0: exit 0 (12.1 s)\n..." with log tails of the failed ones.
std::string Describe(const std::vector<RankOutcome>& outcomes);

}  // namespace ccltune::testing

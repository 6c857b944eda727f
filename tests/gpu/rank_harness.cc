// Forked per-GPU ranks for GPU tests (rank_harness.h).
#include "tests/gpu/rank_harness.h"

#include <cuda_runtime.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "worker/nccl/nccl_backend.h"

namespace ccltune::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::string Tail(const std::string& path, std::size_t max_chars) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  return s.size() > max_chars ? s.substr(s.size() - max_chars) : s;
}

}  // namespace

int ProbeGpuCount(std::string* why) {
  int fds[2];
  if (pipe(fds) != 0) return 0;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string reason;
    const bool ok = worker::NcclAvailable(&reason);
    int n = 0;
    if (ok) (void)cudaGetDeviceCount(&n);
    const std::string msg = std::to_string(n) + " " + reason;
    (void)!write(fds[1], msg.data(), msg.size());
    _exit(0);
  }
  close(fds[1]);
  std::string msg;
  char buf[256];
  ssize_t got;
  while ((got = read(fds[0], buf, sizeof(buf))) > 0) msg.append(buf, static_cast<size_t>(got));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const int n = std::atoi(msg.c_str());
  if (why != nullptr) {
    const auto space = msg.find(' ');
    *why = space == std::string::npos ? "probe failed" : msg.substr(space + 1);
  }
  return n;
}

int TestWorld(int visible) {
  const char* env = std::getenv("CCLTUNE_GPU_TEST_RANKS");
  const int want = env ? std::atoi(env) : visible;
  return want > 0 && want <= visible ? want : visible;
}

int GpuWorldOrZero(int min_gpus) {
  std::string why;
  const int gpus = ProbeGpuCount(&why);
  if (gpus >= min_gpus) return TestWorld(gpus);
  std::printf("SKIP: needs >= %d GPUs, found %d (%s)\n", min_gpus, gpus, why.c_str());
  return 0;
}

int SharedGpuRanks() {
  const char* env = std::getenv("CCLTUNE_GPU_TEST_SHARE_GPU");
  if (env == nullptr || *env == '\0') return 0;
  const int n = std::atoi(env);
  if (n >= 2 && n <= 8) return n;
  std::printf("CCLTUNE_GPU_TEST_SHARE_GPU=%s: 2 to 8 ranks on GPU 0; not sharing\n", env);
  return 0;
}

int SharedOrGpuWorldOrZero(int min_gpus) {
  const int shared = SharedGpuRanks();
  if (shared < min_gpus) return GpuWorldOrZero(min_gpus);
  return GpuWorldOrZero(1) > 0 ? shared : 0;
}

int EnterRankDevice(int rank) {
  if (SharedGpuRanks() == 0) return rank;
  const std::string node = "share-gpu-" + std::to_string(rank);
  ::setenv("NCCL_HOSTID", node.c_str(), 1);
  ::setenv("CCLTUNE_NODE_NAME", node.c_str(), 1);
  return 0;
}

std::vector<RankOutcome> RunRanks(int world, const std::string& dir, double timeout_s,
                                  const std::function<int(int rank)>& body) {
  std::fflush(nullptr);
  std::vector<pid_t> pids(world, -1);
  const auto start = Clock::now();
  for (int r = 0; r < world; ++r) {
    pids[r] = fork();
    if (pids[r] == 0) {
      const std::string log = dir + "/rank" + std::to_string(r) + ".log";
      const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      const int code = body(r);
      std::fflush(nullptr);
      _exit(code);
    }
  }
  std::vector<RankOutcome> out(world);
  int remaining = world;
  while (remaining > 0) {
    for (int r = 0; r < world; ++r) {
      if (pids[r] <= 0) continue;
      int status = 0;
      if (waitpid(pids[r], &status, WNOHANG) != pids[r]) continue;
      out[r].exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      out[r].seconds = std::chrono::duration<double>(Clock::now() - start).count();
      pids[r] = -1;
      --remaining;
    }
    if (remaining > 0 && std::chrono::duration<double>(Clock::now() - start).count() > timeout_s) {
      for (int r = 0; r < world; ++r) {
        if (pids[r] <= 0) continue;
        kill(pids[r], SIGKILL);
        waitpid(pids[r], nullptr, 0);
        out[r].timed_out = true;
        out[r].exit_code = 128 + SIGKILL;
        pids[r] = -1;
      }
      remaining = 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (int r = 0; r < world; ++r) {
    out[r].log_tail = Tail(dir + "/rank" + std::to_string(r) + ".log", 3000);
  }
  return out;
}

std::string Describe(const std::vector<RankOutcome>& outcomes) {
  std::ostringstream os;
  for (std::size_t r = 0; r < outcomes.size(); ++r) {
    const RankOutcome& o = outcomes[r];
    os << "rank " << r << ": exit " << o.exit_code << (o.timed_out ? " (killed at deadline)" : "")
       << " after " << o.seconds << " s\n";
    if (o.exit_code != 0) os << "---- rank " << r << " log tail ----\n" << o.log_tail << "\n";
  }
  return os.str();
}

}  // namespace ccltune::testing

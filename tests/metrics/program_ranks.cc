// program_ranks: one rank of a small "program" whose collectives are timed and recorded through
// libccltune-telemetry's C ABI only (core/telemetry/ccltune_telemetry.h), for the Programs
// dashboard test (programs_dashboard_test.cc). No GPU: the ranks of one communicator meet at
// a barrier in shared memory (a file that rank 0 creates), which stands where our kernels'
// first barrier stands; each call is timed like the kernels time themselves:
//   entry            this rank reaches the barrier (the late rank first sleeps --delay-us)
//   last arrival     the barrier opens (the clock the last rank read on arriving)
//   finish           after copying the call's bytes (the "transfer")
// and recorded with split Kernel: wait = last arrival - entry, transfer = finish - arrival.
// Every 10th call alternates a second size, each call is a ccltune choice; the winners' tuned
// times, a forwarded count and a dropped count are reported too, so every family of
// docs/design.md §13 has series.
//
// Usage: program_ranks --rank R --ranks N --barrier PATH [--late-rank L] [--delay-us D]
//                      [--seconds S] [--comm-hash H]
// Runs until SIGTERM/SIGINT or S seconds (default 120); exit 0, 1 on a failed barrier (a peer
// gone: every wait has a 10 s deadline), 2 on bad usage or telemetry off.
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "core/telemetry/ccltune_telemetry.h"

namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

uint64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

struct Options {
  int rank = -1, ranks = 0, late_rank = -1;
  int64_t delay_us = 0;
  double seconds = 120;
  uint64_t comm_hash = 0x5eedc0de0000cafeull;
  std::string barrier;
};

bool ParseOptions(int argc, char** argv, Options& o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--rank")
      o.rank = std::atoi(v.c_str());
    else if (k == "--ranks")
      o.ranks = std::atoi(v.c_str());
    else if (k == "--late-rank")
      o.late_rank = std::atoi(v.c_str());
    else if (k == "--delay-us")
      o.delay_us = std::atoll(v.c_str());
    else if (k == "--seconds")
      o.seconds = std::atof(v.c_str());
    else if (k == "--comm-hash")
      o.comm_hash = std::strtoull(v.c_str(), nullptr, 16);
    else if (k == "--barrier")
      o.barrier = v;
    else
      return false;
  }
  return o.ranks > 0 && o.rank >= 0 && o.rank < o.ranks && !o.barrier.empty() && o.delay_us >= 0 &&
         o.seconds > 0;
}

// A barrier for processes: a process-shared mutex and condition variable in a mapped file,
// generation-counted; Wait returns the clock the last arriving rank read, or 0 at the
// deadline (a peer gone or stopped).
struct SharedBarrier {
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  int ranks;
  int arrived;
  uint64_t generation;
  uint64_t last_arrival_ns;
};

SharedBarrier* CreateBarrier(const std::string& path, int ranks) {
  const std::string tmp = path + ".init";
  int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || ::ftruncate(fd, sizeof(SharedBarrier)) != 0) return nullptr;
  void* mem = ::mmap(nullptr, sizeof(SharedBarrier), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (mem == MAP_FAILED) return nullptr;
  auto* b = static_cast<SharedBarrier*>(mem);
  pthread_mutexattr_t ma;
  pthread_mutexattr_init(&ma);
  pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
  pthread_mutex_init(&b->mutex, &ma);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&b->cond, &ca);
  b->ranks = ranks;
  b->arrived = 0;
  b->generation = 0;
  b->last_arrival_ns = 0;
  // Published whole: the others open `path` only once it is initialised.
  return ::rename(tmp.c_str(), path.c_str()) == 0 ? b : nullptr;
}

SharedBarrier* OpenBarrier(const std::string& path, double deadline_s) {
  const uint64_t until = NowNs() + static_cast<uint64_t>(deadline_s * 1e9);
  int fd;
  while ((fd = ::open(path.c_str(), O_RDWR)) < 0) {
    if (NowNs() > until || g_stop) return nullptr;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  void* mem = ::mmap(nullptr, sizeof(SharedBarrier), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  return mem == MAP_FAILED ? nullptr : static_cast<SharedBarrier*>(mem);
}

uint64_t WaitBarrier(SharedBarrier* b, double deadline_s) {
  timespec until{};
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_sec += static_cast<time_t>(deadline_s);
  pthread_mutex_lock(&b->mutex);
  const uint64_t generation = b->generation;
  uint64_t arrival = 0;
  if (++b->arrived == b->ranks) {
    b->arrived = 0;
    b->last_arrival_ns = NowNs();
    ++b->generation;
    pthread_cond_broadcast(&b->cond);
  }
  int rc = 0;
  while (b->generation == generation && rc != ETIMEDOUT)
    rc = pthread_cond_timedwait(&b->cond, &b->mutex, &until);
  // A rank cannot complete the next generation before this one arrives again: the value
  // read here is this generation's.
  if (b->generation != generation) arrival = b->last_arrival_ns;
  pthread_mutex_unlock(&b->mutex);
  return arrival;
}

// The two problems the ranks alternate, with the time their winner was tuned to take.
struct Problem {
  uint64_t bytes;
  const char* choice;
  double tuned_seconds;
};
const Problem kProblems[] = {{65536, "oneshot:blocks=8,mode=pull,threads=512", 20e-6},
                             {1048576, "twoshot:blocks=32,mode=pull,threads=512", 60e-6}};

void RecordCall(const Options& o, const Problem& p, uint64_t seq, uint64_t entry, uint64_t arrival,
                uint64_t finish) {
  ccltuneTelemetryCall_t call{};
  call.size = sizeof call;
  call.comm_hash = o.comm_hash;
  call.op = "allReduce";
  call.dtype = "bf16";
  call.bytes = p.bytes;
  call.choice = p.choice;
  call.seq = seq;
  call.total_ns = finish - entry;
  call.split = ccltuneTelemetrySplitKernel;
  call.wait_ns = arrival > entry ? arrival - entry : 0;
  call.transfer_ns = finish > arrival ? finish - arrival : 0;
  call.channels = 8;
  ccltuneTelemetryRecordCall(&call);
}

int Run(const Options& o) {
  ccltuneTelemetryComm_t comm{};
  comm.size = sizeof comm;
  comm.comm_hash = o.comm_hash;
  comm.rank = o.rank;
  comm.nranks = o.ranks;
  comm.cuda_device = -1;
  ccltuneTelemetryCommInit(&comm);
  for (const Problem& p : kProblems)
    ccltuneTelemetryTuned(o.comm_hash, "allReduce", "bf16", p.bytes, p.choice, p.tuned_seconds);
  ccltuneTelemetryDropped("kernel-ring-full", 1);

  SharedBarrier* barrier =
      o.rank == 0 ? CreateBarrier(o.barrier, o.ranks) : OpenBarrier(o.barrier, 10);
  if (barrier == nullptr) {
    std::fprintf(stderr, "program_ranks %d: barrier %s: %s\n", o.rank, o.barrier.c_str(),
                 std::strerror(errno));
    return 1;
  }
  std::vector<char> src(kProblems[1].bytes, 1), dst(kProblems[1].bytes);
  const uint64_t end = NowNs() + static_cast<uint64_t>(o.seconds * 1e9);
  uint64_t seq = 0;
  for (; !g_stop && NowNs() < end; ++seq) {
    const Problem& p = kProblems[seq % 10 == 9 ? 1 : 0];
    if (o.rank == o.late_rank) std::this_thread::sleep_for(std::chrono::microseconds(o.delay_us));
    const uint64_t entry = NowNs();
    const uint64_t arrival = WaitBarrier(barrier, 10);
    if (arrival == 0) {
      if (g_stop) break;  // a peer was stopped first
      std::fprintf(stderr, "program_ranks %d: barrier of call %llu timed out after 10 s\n", o.rank,
                   static_cast<unsigned long long>(seq));
      return 1;
    }
    std::memcpy(dst.data(), src.data(), p.bytes);
    RecordCall(o, p, seq, entry, arrival, NowNs());
    if (seq % 100 == 99) ccltuneTelemetryForwarded("in-group", 1);
  }
  std::fprintf(stderr, "program_ranks %d: %llu calls recorded\n", o.rank,
               static_cast<unsigned long long>(seq));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseOptions(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: program_ranks --rank R --ranks N --barrier PATH [--late-rank L] "
                 "[--delay-us D] [--seconds S] [--comm-hash HEX]\n");
    return 2;
  }
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  if (ccltuneTelemetryAbiVersion() != CCLTUNE_TELEMETRY_ABI_VERSION || !ccltuneTelemetryEnabled()) {
    std::fprintf(stderr, "program_ranks %d: telemetry is off or its ABI is %d (want %d)\n", o.rank,
                 ccltuneTelemetryAbiVersion(), CCLTUNE_TELEMETRY_ABI_VERSION);
    return 2;
  }
  const int code = Run(o);
  ccltuneTelemetryShutdown();
  return code;
}

// The end-to-end test's program (profiler_metrics_test.cc starts it): links the real
// libccltune-telemetry.so.1, so that CCLTUNE_TELEMETRY, CCLTUNE_METRICS_PORT and LOCAL_RANK
// from its parent are read as in an application, loads the plugin as NCCL does and drives
// it through the fake NCCL (NCCL 2.28's way: v5, the duty cycle) on one communicator (hash
// 0123456789abcdef, rank 2 of 4), NCCL numbering each op's calls:
//   2 allGather fp32 of 16 KiB (1024 elements from each of the 4 ranks) on NVLSTree/Simple,
//     800 ns each: both timed (numbers 0, 1);
//   1100 allReduce bf16 of 512 KiB on ring/LL128, 4100 ns each: timed 0-63 and 1024-1087
//     (128), every one counted;
//   then, with a pool of 16, 18 reduceScatter bf16 of 512 KiB left in flight: the first is not
//     timed (the last allReduce decided for allReduce 1100, not sampled), the next 17 are, and
//     the 17th of those finds the pool full (one "profiler-events-full" drop).
// Prints "ready" and stays up (60 s) to be scraped.
#include <unistd.h>

#include <cstdio>
#include <vector>

#include "core/telemetry/ccltune_telemetry.h"
#include "tests/profiler/fake_nccl.h"

using namespace ccltune::testing;

namespace {

FakeColl Call(const char* func, std::size_t count, const char* dtype, const char* algo,
              const char* proto, std::vector<std::pair<std::uint64_t, std::uint64_t>> stamps) {
  FakeColl c;
  c.func = func;
  c.count = count;
  c.datatype = dtype;
  c.channels = static_cast<std::uint8_t>(stamps.size());
  c.algo = algo;
  c.proto = proto;
  c.stamps = std::move(stamps);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  // A reference, so the linker keeps the library (loaded before the plugin, as the
  // application's) and the version it is built for is said.
  std::printf("telemetry ABI %d\n", ccltuneTelemetryAbiVersion());
  const LoadedProfiler lib(argv[1]);
  if (!lib.ok()) {
    std::fprintf(stderr, "%s\n", lib.error().c_str());
    return 1;
  }
  FakeComm comm(lib, 5, 0x0123456789abcdefull, 2, 4);
  if (comm.mask() == 0) {
    std::fprintf(stderr, "mask 0: telemetry off?\n");
    return 1;
  }
  FakeColl ar = Call("AllReduce", 262144, "ncclBfloat16", "RING", "LL128",
                     {{1000, 5000}, {1010, 5100}, {1005, 4900}, {1020, 5050}});
  FakeColl ag =
      Call("AllGather", 1024, "ncclFloat32", "NVLS_TREE", "SIMPLE", {{100, 900}, {150, 800}});
  FakeColl rs = ar;
  rs.func = "ReduceScatter";
  rs.count = 65536;  // per rank
  for (int i = 0; i < 2; ++i) comm.Collective(ag);
  for (int i = 0; i < 1100; ++i) comm.Collective(ar);
  // CCLTUNE_PROFILER_EVENTS=16 (set by the test): never finished, so they add no times.
  std::vector<Launch> held;
  for (int i = 0; i < 18; ++i) held.push_back(comm.Begin(rs));
  std::printf("ready\n");
  std::fflush(stdout);
  sleep(60);
  return 0;
}

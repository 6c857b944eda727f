// What the profiler plugin costs NCCL's threads on the host: the built plugin is dlopen()ed
// as NCCL does and its v5 table is called in NCCL 2.28's order, in batches timed as a whole,
// against the telemetry double in counting mode (the figures are the plugin's own; the
// library's enqueue is measured with the library). The same calls into a table of empty
// functions give the cost of the calls themselves. Two kinds of call under the duty cycle:
//   unsampled  the calling thread only: GroupApi start (no handle), CollApi start (the call's
//              UNTIMED record, the choice look-up, the count and the mask decision);
//   sampled    launching thread: those two, then the Group start (no handle), the Coll's start
//              and stop; proxy thread, per channel: KernelCh start, KernelChStop record, stop
//              (the Coll's COUNTED record with the last).
// Run by hand:
//   CCLTUNE_TELEMETRY=on build-cpu/tests/profiler/profiler_event_cost \
//       build-cpu/plugin/libnccl-profiler-ccltune.so [collectives]
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "tests/profiler/fake_nccl.h"
#include "tests/profiler/telemetry_double.h"

namespace ccltune::testing {
namespace {

namespace abi = prof_abi;

// Empty functions: what calling through NCCL's table costs with a plugin that does nothing.
int NullStart(void*, void** h, abi::EventDescrV5*) {
  *h = nullptr;
  return 0;
}
int NullStop(void*) { return 0; }
int NullRecord(void*, abi::EventState, abi::EventStateArgs*) { return 0; }

struct Table {
  int (*start)(void*, void**, abi::EventDescrV5*);
  int (*stop)(void*);
  int (*record)(void*, abi::EventState, abi::EventStateArgs*);
};

struct Costs {
  double launch_ns;  // per collective, the launching thread
  double proxy_ns;   // per collective, the proxy thread
};

using Clock = std::chrono::steady_clock;
constexpr long kBatch = 1000;

double PerCall(Clock::duration d, long n) {
  return std::chrono::duration<double, std::nano>(d).count() / static_cast<double>(n);
}

// The application's allReduce of 256 Ki bf16, as its CollApi event describes it.
abi::EventDescrV5 CollApi() {
  abi::EventDescrV5 d{};
  d.type = abi::kProfileCollApi;
  d.collApi = {"AllReduce", 262144, "ncclBfloat16", 0, nullptr, false};
  return d;
}

// `n` unsampled calls: GroupApi and CollApi starts only (NCCL starts nothing at launch).
double RunUnsampled(const Table& t, void* ctx, long n) {
  abi::EventDescrV5 group_api{};
  group_api.type = abi::kProfileGroupApi;
  abi::EventDescrV5 coll_api = CollApi();
  Clock::duration took{};
  for (long done = 0; done < n; done += kBatch) {
    const auto t0 = Clock::now();
    for (long i = 0; i < kBatch; ++i) {
      void* h;
      t.start(ctx, &h, &group_api);
      t.start(ctx, &h, &coll_api);
    }
    took += Clock::now() - t0;
  }
  return PerCall(took, n);
}

// `n` sampled collectives of `channels` channels; a null-handle result is treated as NCCL does.
Costs Run(const Table& t, void* ctx, long n, int channels) {
  abi::EventDescrV5 ignored[3]{};
  ignored[0].type = abi::kProfileGroupApi;
  ignored[1] = CollApi();
  ignored[2].type = abi::kProfileGroup;
  abi::EventDescrV5 coll{};
  coll.type = abi::kProfileColl;
  coll.coll = {0,      "AllReduce", nullptr,        nullptr,
               262144, 0,           "ncclBfloat16", static_cast<std::uint8_t>(channels),
               16,     "RING",      "LL128",        nullptr};
  abi::EventDescrV5 ch{};
  ch.type = abi::kProfileKernelCh;
  abi::EventStateArgs stop{};
  Clock::duration launch{}, proxy{};
  void* handles[kBatch];
  for (long done = 0; done < n; done += kBatch) {
    const auto t0 = Clock::now();
    for (long i = 0; i < kBatch; ++i) {
      void* h;
      for (auto& d : ignored) t.start(ctx, &h, &d);
      coll.coll.seqNumber = static_cast<std::uint64_t>(done + i);
      t.start(ctx, &handles[i], &coll);
      if (handles[i]) t.stop(handles[i]);
    }
    const auto t1 = Clock::now();
    for (long i = 0; i < kBatch; ++i) {
      ch.parentObj = handles[i];
      for (int c = 0; c < channels; ++c) {
        void* h = nullptr;
        ch.kernelCh = {static_cast<std::uint8_t>(c), 1000u + c};
        t.start(ctx, &h, &ch);
        if (h == nullptr) continue;
        stop.kernelCh.pTimer = 5000u + c;
        t.record(h, abi::kKernelChStop, &stop);
        t.stop(h);
      }
    }
    launch += t1 - t0;
    proxy += Clock::now() - t1;
  }
  return {PerCall(launch, n), PerCall(proxy, n)};
}

}  // namespace
}  // namespace ccltune::testing

int main(int argc, char** argv) {
  using namespace ccltune::testing;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PLUGIN.so [collectives]\n", argv[0]);
    return 2;
  }
  const LoadedProfiler lib(argv[1]);
  if (!lib.ok() || lib.v5() == nullptr) {
    std::fprintf(stderr, "%s\n", lib.ok() ? "no ncclProfiler_v5" : lib.error().c_str());
    return 1;
  }
  const long n = argc > 2 ? std::atol(argv[2]) : 1000000;
  FakeComm comm(lib, 5, 0xabcdef, 0, 8);
  if (comm.mask() == 0) {
    std::fprintf(stderr, "telemetry is off: set CCLTUNE_TELEMETRY=on\n");
    return 2;
  }
  TelemetryDoubleKeepCalls(false);
  const Table plugin{lib.v5()->startEvent, lib.v5()->stopEvent, lib.v5()->recordEventState};
  const Table null{NullStart, NullStop, NullRecord};
  TelemetryDoubleReset();
  const double unsampled = RunUnsampled(plugin, comm.context(), n);
  const double unsampled_null = RunUnsampled(null, nullptr, n);
  std::printf("# unsampled call: host ns on the calling thread, mean over %ld (batches of 1000)\n",
              n);
  std::printf("%14s %14s %14s %10s\n", "unsampled_ns", "unsampled_null", "plugin_ns", "untimed");
  std::printf("%14.1f %14.1f %14.1f %10llu\n", unsampled, unsampled_null,
              unsampled - unsampled_null,
              static_cast<unsigned long long>(TelemetryDoubleUntimedCount()));
  std::printf("# sampled call: host ns per collective, mean over %ld (v5 order, batches of 1000)\n",
              n);
  std::printf("%8s %14s %14s %14s %14s %16s %10s\n", "channels", "launch_ns", "launch_null",
              "proxy_ns", "proxy_null", "per_event_ns", "recorded");
  for (int channels : {1, 4, 16, 32}) {
    TelemetryDoubleReset();
    const Costs p = Run(plugin, comm.context(), n, channels);
    const Costs z = Run(null, nullptr, n, channels);
    // Events the plugin handles per collective: GroupApi, CollApi and Group starts, Coll start
    // and stop, and 3 per channel. `recorded`: two records per call (UNTIMED, COUNTED).
    const double per_event =
        (p.launch_ns + p.proxy_ns - z.launch_ns - z.proxy_ns) / (5.0 + 3.0 * channels);
    std::printf("%8d %14.1f %14.1f %14.1f %14.1f %16.1f %10llu\n", channels, p.launch_ns,
                z.launch_ns, p.proxy_ns, z.proxy_ns, per_event,
                static_cast<unsigned long long>(TelemetryDoubleCallCount()));
  }
  return 0;
}

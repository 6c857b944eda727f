// The profiler plugin driven by a fake NCCL (fake_nccl.h) through its exported v6, v5 and v4
// tables, in the order NCCL 2.27-2.29 call it, with exact inputs; what it calls in
// libccltune-telemetry is kept by the test double (telemetry_double.h) and compared exactly.
// v5/v6 run the duty cycle (plugin/profiler/duty_cycle.h): every call one UNTIMED record from
// its CollApi, the sampled calls also one COUNTED record with their times.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "tests/plugin/scoped_env.h"
#include "tests/profiler/fake_nccl.h"
#include "tests/profiler/telemetry_double.h"

namespace ccltune::testing {
namespace {

namespace abi = prof_abi;
constexpr std::uint64_t kComm = 0x0123456789abcdefull;
constexpr int kAlways = static_cast<int>(abi::kProfileColl | abi::kProfileKernelCh);  // v4
constexpr int kIdle = static_cast<int>(abi::kProfileCollApi);
constexpr int kSampled = kIdle | kAlways;
constexpr std::uint32_t kUntimed = CCLTUNE_TELEMETRY_CALL_UNTIMED;
constexpr std::uint32_t kCounted = CCLTUNE_TELEMETRY_CALL_COUNTED;

// allReduce bf16 of 512 KiB on 4 channels whose GPU stamps span 1000 .. 5100 ns.
FakeColl AllReduce(std::uint64_t seq) {
  FakeColl c;
  c.seq = seq;
  c.func = "AllReduce";
  c.count = 262144;
  c.datatype = "ncclBfloat16";
  c.channels = 4;
  c.algo = "RING";
  c.proto = "LL128";
  c.stamps = {{1000, 5000}, {1010, 5100}, {1005, 4900}, {1020, 5050}};
  return c;
}

// A timed record: COUNTED under the duty cycle (v5/v6), flags 0 on v4.
RecordedCall Expected(std::uint64_t comm, const std::string& op, const std::string& dtype,
                      std::uint64_t bytes, const std::string& choice, std::uint64_t seq,
                      std::uint64_t total_ns, int channels, std::uint32_t flags = kCounted) {
  return {comm, op, dtype,    bytes, choice, seq, total_ns, ccltuneTelemetrySplitNone,
          0,    0,  channels, flags};
}

// A CollApi's record: the call counted, no times, no seq.
RecordedCall Count(std::uint64_t comm, const std::string& op, const std::string& dtype,
                   std::uint64_t bytes, const std::string& choice) {
  return {comm, op, dtype, bytes,   choice, UINT64_MAX, 0, ccltuneTelemetrySplitNone,
          0,    0,  0,     kUntimed};
}

std::vector<std::uint64_t> Seqs(const std::vector<RecordedCall>& calls, const std::string& op) {
  std::vector<std::uint64_t> out;
  for (const RecordedCall& c : calls)
    if (c.op == op) out.push_back(c.seq);
  std::sort(out.begin(), out.end());
  return out;
}

// [first, last] appended to `out`.
void Range(std::vector<std::uint64_t>& out, std::uint64_t first, std::uint64_t last) {
  for (std::uint64_t s = first; s <= last; ++s) out.push_back(s);
}

class ProfilerPluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(lib_.ok()) << lib_.error();
    TelemetryDoubleReset();
    ClearProfilerLog();
  }
  LoadedProfiler lib_{ProfilerPath()};
};

TEST_F(ProfilerPluginTest, ExportsV6V5V4AndNoOtherVersion) {
  ASSERT_NE(lib_.v6(), nullptr);
  ASSERT_NE(lib_.v5(), nullptr);
  ASSERT_NE(lib_.v4(), nullptr);
  EXPECT_STREQ(lib_.v6()->name, "ccltune");
  EXPECT_STREQ(lib_.v5()->name, "ccltune");
  EXPECT_STREQ(lib_.v4()->name, "ccltune");
  // NCCL looks the newest up first and falls back: the others are simply not there.
  for (const char* absent : {"ncclProfiler_v7", "ncclProfiler_v3", "ncclProfiler_v2",
                             "ncclProfiler_v1", "ncclProfiler"}) {
    EXPECT_EQ(lib_.Symbol(absent), nullptr) << absent;
  }
}

TEST_F(ProfilerPluginTest, OneAllReduceOnV5IsOneCallWithItsGpuTime) {
  ScopedEnv env({{"CCLTUNE_TELEMETRY", "on"}});
  {
    FakeComm comm(lib_, 5, kComm, 2, 4);
    ASSERT_EQ(comm.init_rc(), abi::kSuccess);
    EXPECT_EQ(comm.mask(), kSampled);  // the first call (number 0) is sampled
    comm.Collective(AllReduce(7));
    EXPECT_EQ(comm.mask(), kSampled);  // so is the next (number 1)
  }
  EXPECT_EQ(TelemetryDoubleComms(), (std::vector<RecordedComm>{{kComm, 2, 4, -1}}));
  // Counted at its CollApi, before any Coll of its size said what runs: "nccl". Then timed:
  // 5100 (the last stop) - 1000 (the first start).
  EXPECT_EQ(TelemetryDoubleCalls(),
            (std::vector<RecordedCall>{Count(kComm, "allReduce", "bf16", 524288, "nccl"),
                                       Expected(kComm, "allReduce", "bf16", 524288,
                                                "nccl:algo=ring,proto=ll128", 7, 4100, 4)}));
  EXPECT_TRUE(TelemetryDoubleDrops().empty());
}

// v4 (no CollApi): one record per call, flags 0, as NCCL's Coll says it (allGather: int8).
TEST_F(ProfilerPluginTest, V4AndV6CarryTheSameCalls) {
  ScopedEnv env({{"CCLTUNE_TELEMETRY", "on"}});
  FakeColl ag;
  ag.seq = 3;
  ag.func = "AllGather";
  ag.count = 1024;  // per rank
  ag.datatype = "ncclFloat32";
  ag.channels = 2;
  ag.algo = "NVLS_TREE";
  ag.proto = "SIMPLE";
  ag.stamps = {{100, 900}, {150, 800}};
  FakeColl rs = ag;
  rs.func = "ReduceScatter";
  rs.algo = "PAT";
  rs.proto = "LL";
  {
    FakeComm v4(lib_, 4, 11, 0, 8);
    EXPECT_EQ(v4.mask(), kAlways);
    v4.Collective(ag);
  }
  {
    FakeComm v6(lib_, 6, 12, 1, 8);
    EXPECT_EQ(v6.mask(), kSampled);
    v6.Collective(rs);
  }
  EXPECT_EQ(TelemetryDoubleComms(), (std::vector<RecordedComm>{{11, 0, 8, -1}, {12, 1, 8, -1}}));
  EXPECT_EQ(
      TelemetryDoubleCalls(),
      (std::vector<RecordedCall>{
          Expected(11, "allGather", "int8", 32768, "nccl:algo=nvlstree,proto=simple", 3, 800, 2, 0),
          Count(12, "reduceScatter", "fp32", 32768, "nccl"),
          Expected(12, "reduceScatter", "fp32", 32768, "nccl:algo=pat,proto=ll", 3, 800, 2)}));
}

TEST_F(ProfilerPluginTest, ChannelsThatFinishBeforeTheCollStopsAreCountedOnce) {
  ScopedEnv env({{"CCLTUNE_TELEMETRY", "on"}});
  FakeComm comm(lib_, 5, kComm, 0, 4);
  const FakeColl c = AllReduce(9);
  const Launch l = comm.Begin(c);
  comm.Channels(l, c);  // the proxy thread ran ahead of the launching thread
  EXPECT_TRUE(TelemetryDoubleTimes().empty());  // the Coll has not stopped yet
  comm.End(l);
  EXPECT_EQ(TelemetryDoubleTimes(),
            (std::vector<RecordedCall>{Expected(kComm, "allReduce", "bf16", 524288,
                                                "nccl:algo=ring,proto=ll128", 9, 4100, 4)}));
}

TEST_F(ProfilerPluginTest, TelemetryOffMeansMaskZeroAndNothingCalled) {
  ScopedEnv env({{"CCLTUNE_TELEMETRY", "off"}});
  FakeComm comm(lib_, 5, kComm, 0, 4);
  EXPECT_EQ(comm.init_rc(), abi::kSuccess);
  EXPECT_EQ(comm.mask(), 0);
  EXPECT_EQ(comm.context(), nullptr);
  comm.Collective(AllReduce(1));  // NCCL starts nothing under mask 0
  // Even called anyway, a null context gives null handles.
  EXPECT_EQ(comm.StartRaw(abi::kProfileColl, nullptr), nullptr);
  EXPECT_TRUE(TelemetryDoubleComms().empty());
  EXPECT_TRUE(TelemetryDoubleCalls().empty());
  EXPECT_TRUE(ProfilerLog().empty());
}

TEST_F(ProfilerPluginTest, AFullPoolDropsCountsAndLogsOnce) {
  ScopedEnv env({{"CCLTUNE_TELEMETRY", "on"}, {"CCLTUNE_PROFILER_EVENTS", "16"}});
  FakeComm comm(lib_, 5, kComm, 0, 4);
  std::vector<Launch> launched;
  for (int i = 0; i < 16; ++i) launched.push_back(comm.Begin(AllReduce(i)));
  // Numbered on (NCCL's own numbers): calls 16-20 are sampled too, so each brings a Coll.
  for (int i = 0; i < 5; ++i) EXPECT_EQ(comm.Begin(AllReduce(16 + i)).coll, nullptr);
  EXPECT_EQ(TelemetryDoubleDrops(), std::vector<RecordedDrop>(5, {"profiler-events-full", 1}));
  const auto log = ProfilerLog();
  const auto full = std::count_if(log.begin(), log.end(), [](const LogLine& l) {
    return l.level == abi::kLogWarn && l.text.find("pool is full") != std::string::npos &&
           l.text.find("CCLTUNE_PROFILER_EVENTS") != std::string::npos;
  });
  EXPECT_EQ(full, 1);
  for (int i = 0; i < 16; ++i) {
    comm.End(launched[i]);
    comm.Channels(launched[i], AllReduce(i));
  }
  EXPECT_EQ(TelemetryDoubleTimes().size(), 16u);
  comm.Collective(AllReduce(21));  // room again
  ASSERT_EQ(TelemetryDoubleTimes().size(), 17u);
  EXPECT_EQ(TelemetryDoubleTimes().back().seq, 21u);
  // Every call counted, the 5 untimed ones too (their CollApi came before the full pool).
  EXPECT_EQ(TelemetryDoubleCounts().size(), 22u);
}

TEST_F(ProfilerPluginTest, UnknownEventTypesAndStatesAreIgnored) {
  ScopedEnv env({{"CCLTUNE_TELEMETRY", "on"}});
  FakeComm comm(lib_, 6, kComm, 0, 4);
  for (std::uint64_t type :
       {abi::kProfileP2p, abi::kProfileProxyOp, abi::kProfileProxyStep, abi::kProfileProxyCtrl,
        abi::kProfileNetPlugin, abi::kProfileKernelLaunch, abi::kProfileCeColl, abi::kProfileCeSync,
        abi::kProfileCeBatch, std::uint64_t{1} << 40, std::uint64_t{0}}) {
    EXPECT_EQ(comm.StartRaw(type, nullptr), nullptr) << type;
  }
  // A KernelCh whose parent is not ours, or none.
  int not_ours = 0;
  EXPECT_EQ(comm.StartRaw(abi::kProfileKernelCh, &not_ours), nullptr);
  EXPECT_EQ(comm.StartRaw(abi::kProfileKernelCh, nullptr), nullptr);
  EXPECT_EQ(comm.Stop(nullptr), abi::kSuccess);
  EXPECT_EQ(comm.Record(nullptr, abi::kKernelChStop, nullptr), abi::kSuccess);
  // Unknown states on a live Coll change nothing.
  const FakeColl c = AllReduce(4);
  const Launch l = comm.Begin(c);
  abi::EventStateArgs args{};
  args.kernelCh.pTimer = 999999;
  for (int state : {0, 8, 13, 21, 23, 25, 99}) comm.Record(l.coll, state, &args);
  comm.End(l);
  comm.Channels(l, c);
  EXPECT_EQ(TelemetryDoubleTimes(),
            (std::vector<RecordedCall>{Expected(kComm, "allReduce", "bf16", 524288,
                                                "nccl:algo=ring,proto=ll128", 4, 4100, 4)}));
  EXPECT_TRUE(TelemetryDoubleDrops().empty());
}

TEST_F(ProfilerPluginTest, CollsWithoutChannelsOrGpuStampsAreDroppedAndCounted) {
  ScopedEnv env({{"CCLTUNE_TELEMETRY", "on"}});
  FakeComm comm(lib_, 5, kComm, 0, 4);
  FakeColl none = AllReduce(1);
  none.channels = 0;  // NCCL announced no channel events
  none.stamps.clear();
  comm.Collective(none);
  FakeColl unstamped = AllReduce(2);
  unstamped.channels = 1;
  unstamped.stamps = {{0, 0}};
  comm.Collective(unstamped);
  FakeColl extra = AllReduce(3);
  extra.channels = 1;
  extra.stamps = {{10, 20}, {5, 500}};  // a second channel beyond the one announced
  const Launch l = comm.Begin(extra);
  comm.Channels(l, extra);
  comm.End(l);
  // A channel naming a Coll that already finished (its event is back in the pool).
  EXPECT_EQ(comm.StartRaw(abi::kProfileKernelCh, l.coll), nullptr);
  EXPECT_EQ(TelemetryDoubleDrops(), (std::vector<RecordedDrop>{{"profiler-coll-no-channels", 1},
                                                               {"profiler-no-gpu-time", 1}}));
  EXPECT_EQ(TelemetryDoubleTimes(),
            (std::vector<RecordedCall>{Expected(kComm, "allReduce", "bf16", 524288,
                                                "nccl:algo=ring,proto=ll128", 3, 10, 1)}));
  EXPECT_EQ(TelemetryDoubleCounts().size(), 3u);  // the three calls, counted all the same
}

TEST_F(ProfilerPluginTest, ABadSettingIsOneWarningAndMaskZero) {
  ScopedEnv env({{"CCLTUNE_TELEMETRY", "on"}, {"CCLTUNE_PROFILER_EVENTS", "lots"}});
  FakeComm comm(lib_, 5, kComm, 0, 4);
  EXPECT_EQ(comm.init_rc(), abi::kSuccess);
  EXPECT_EQ(comm.mask(), 0);
  const auto log = ProfilerLog();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].level, abi::kLogWarn);
  EXPECT_EQ(log[0].text,
            "ccltune profiler: CCLTUNE_PROFILER_EVENTS=\"lots\": expected an integer 16..65536; "
            "NCCL's calls are not profiled");
  EXPECT_TRUE(TelemetryDoubleComms().empty());
}

TEST_F(ProfilerPluginTest, ABadTimingSettingIsOneWarningAndMaskZero) {
  ScopedEnv env({{"CCLTUNE_TELEMETRY", "on"}, {"CCLTUNE_PROFILER_TIMING", "always"}});
  FakeComm comm(lib_, 6, kComm, 0, 4);
  EXPECT_EQ(comm.mask(), 0);
  const auto log = ProfilerLog();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].text,
            "ccltune profiler: CCLTUNE_PROFILER_TIMING=\"always\": expected sampled (the default) "
            "or every; NCCL's calls are not profiled");
}

// CCLTUNE_PROFILER_TIMING=every (for measuring what the duty cycle saves): every call timed and
// still counted once, on v5 and v6.
TEST_F(ProfilerPluginTest, TimingEveryCallTimesAndCountsEachOnce) {
  ScopedEnv env({{"CCLTUNE_TELEMETRY", "on"}, {"CCLTUNE_PROFILER_TIMING", "every"}});
  for (int version : {5, 6}) {
    SCOPED_TRACE(version);
    TelemetryDoubleReset();
    FakeComm comm(lib_, version, kComm, 0, 4);
    FakeColl c = AllReduce(0);
    c.seq.reset();
    for (int i = 0; i < 1100; ++i) {
      const Launch l = comm.Begin(c);
      EXPECT_EQ(l.mask, kSampled);
      comm.End(l);
      comm.Channels(l, c);
    }
    EXPECT_EQ(TelemetryDoubleCounts().size(), 1100u);
    std::vector<std::uint64_t> all;
    Range(all, 0, 1099);
    EXPECT_EQ(Seqs(TelemetryDoubleTimes(), "allReduce"), all);
  }
  ::unsetenv("CCLTUNE_PROFILER_TIMING");
  FakeComm later(lib_, 5, kComm, 1, 4);  // a later init reads the setting again
  EXPECT_EQ(later.mask(), kSampled);     // call 0 is sampled anyway
}

// NCCL's proxy thread reports the channels of the timed calls while the launching thread goes
// on: 20000 calls numbered by NCCL, every one counted, the sampled ones timed.
TEST_F(ProfilerPluginTest, AProxyThreadBesideTheLaunchingThreadLosesNothing) {
  ScopedEnv env({{"CCLTUNE_TELEMETRY", "on"}, {"CCLTUNE_PROFILER_EVENTS", "65536"}});
  constexpr int kCalls = 20000;
  FakeComm comm(lib_, 5, kComm, 0, 4);
  FakeColl c = AllReduce(0);
  c.seq.reset();  // NCCL's own numbering
  std::vector<Launch> launched(kCalls);
  std::atomic<int> ready{0};
  std::thread proxy([&] {
    for (int i = 0; i < kCalls; ++i) {
      while (ready.load(std::memory_order_acquire) <= i) std::this_thread::yield();
      comm.Channels(launched[i], c);
    }
  });
  for (int i = 0; i < kCalls; ++i) {
    launched[i] = comm.Begin(c);
    ready.store(i + 1, std::memory_order_release);  // NCCL's proxy queue orders this
    comm.End(launched[i]);
  }
  proxy.join();
  EXPECT_EQ(TelemetryDoubleCounts().size(), static_cast<std::size_t>(kCalls));
  const auto times = TelemetryDoubleTimes();
  std::vector<std::uint64_t> expected;  // seq % 1024 < 64: 20 windows, the last one whole
  for (std::uint64_t w = 0; w < 20; ++w) Range(expected, w * 1024, w * 1024 + 63);
  EXPECT_EQ(Seqs(times, "allReduce"), expected);
  for (const RecordedCall& t : times) {
    EXPECT_EQ(t.total_ns, 4100u);
    EXPECT_EQ(t.flags, kCounted);
  }
  EXPECT_TRUE(TelemetryDoubleDrops().empty());
}

// One op on one communicator: the mask written during call s governs call s+1 (NCCL loads it
// before the plugin hears of a call), so exactly the calls the matcher samples are timed.
TEST_F(ProfilerPluginTest, TheDutyCycleTimesExactlyTheSampledCalls) {
  ScopedEnv env({{"CCLTUNE_TELEMETRY", "on"}});
  for (int version : {5, 6}) {
    SCOPED_TRACE(version);
    TelemetryDoubleReset();
    FakeComm comm(lib_, version, kComm, 0, 4);
    FakeColl c = AllReduce(0);
    c.seq.reset();
    std::vector<std::uint64_t> sampled_tasks;
    for (std::uint64_t i = 0; i < 2100; ++i) {
      const Launch l = comm.Begin(c);
      if (l.mask == kSampled) sampled_tasks.push_back(i);
      EXPECT_TRUE(l.mask == kSampled || l.mask == kIdle) << l.mask;
      EXPECT_EQ(l.group, nullptr);     // the plugin gives the Group no handle
      EXPECT_EQ(l.coll_api, nullptr);  // nor the CollApi
      comm.End(l);
      comm.Channels(l, c);
    }
    std::vector<std::uint64_t> expected;  // 64 + 64 + 52
    Range(expected, 0, 63);
    Range(expected, 1024, 1087);
    Range(expected, 2048, 2099);
    EXPECT_EQ(sampled_tasks, expected);
    const auto counts = TelemetryDoubleCounts();
    ASSERT_EQ(counts.size(), 2100u);
    // The first is counted before any Coll said what NCCL runs for its size.
    EXPECT_EQ(counts[0], Count(kComm, "allReduce", "bf16", 524288, "nccl"));
    for (std::size_t i = 1; i < counts.size(); ++i)
      ASSERT_EQ(counts[i], Count(kComm, "allReduce", "bf16", 524288, "nccl:algo=ring,proto=ll128"));
    const auto times = TelemetryDoubleTimes();
    EXPECT_EQ(Seqs(times, "allReduce"), expected);
    for (const RecordedCall& t : times)
      ASSERT_EQ(t, Expected(kComm, "allReduce", "bf16", 524288, "nccl:algo=ring,proto=ll128", t.seq,
                            4100, 4));
    EXPECT_EQ(comm.mask(), kSampled);  // after call 2099: call 2100 (2100 % 1024 = 52) is sampled
  }
}

// allReduce and allGather in turn: each decision is for the next call of the op that made
// it, but the next call is the other op's. allReduce s follows allGather s-1, whose decision
// was for its own s: exact. allGather s follows allReduce s, decided for s+1: allGather's
// timed calls are one early (0..62 and 1023..1086; 63 and 1087 are missed).
TEST_F(ProfilerPluginTest, AMixedStreamIsTimedByTheOtherOpsDecision) {
  ScopedEnv env({{"CCLTUNE_TELEMETRY", "on"}});
  FakeComm comm(lib_, 6, kComm, 1, 4);
  FakeColl ar = AllReduce(0);
  ar.seq.reset();
  FakeColl ag;
  ag.func = "AllGather";
  ag.count = 1024;  // fp32 per rank: 16 KiB in all
  ag.datatype = "ncclFloat32";
  ag.channels = 2;
  ag.algo = "NVLS_TREE";
  ag.stamps = {{100, 900}, {150, 800}};
  for (int i = 0; i < 1100; ++i) {
    comm.Collective(ar);
    comm.Collective(ag);
  }
  const auto counts = TelemetryDoubleCounts();
  EXPECT_EQ(std::count_if(counts.begin(), counts.end(),
                          [](const RecordedCall& c) { return c.op == "allReduce"; }),
            1100);
  EXPECT_EQ(std::count_if(counts.begin(), counts.end(),
                          [](const RecordedCall& c) { return c.op == "allGather"; }),
            1100);
  std::vector<std::uint64_t> ar_expected, ag_expected;
  Range(ar_expected, 0, 63);
  Range(ar_expected, 1024, 1087);
  Range(ag_expected, 0, 62);
  Range(ag_expected, 1023, 1086);
  const auto times = TelemetryDoubleTimes();
  EXPECT_EQ(Seqs(times, "allReduce"), ar_expected);
  EXPECT_EQ(Seqs(times, "allGather"), ag_expected);
  // NCCL's Coll says ncclInt8 and 4096 bytes per rank; the record keeps the application's fp32.
  for (const RecordedCall& t : times) {
    if (t.op != "allGather") continue;
    ASSERT_EQ(t, Expected(kComm, "allGather", "fp32", 16384, "nccl:algo=nvlstree,proto=simple",
                          t.seq, 800, 2));
  }
}

// NCCL's Coll says ncclInt8 for allGather and broadcast; the CollApi's datatype is kept.
TEST_F(ProfilerPluginTest, AllGatherAndBroadcastKeepTheApplicationsDtype) {
  ScopedEnv env({{"CCLTUNE_TELEMETRY", "on"}});
  FakeComm comm(lib_, 5, kComm, 0, 4);
  FakeColl ag = AllReduce(0);
  ag.func = "AllGather";
  ag.count = 1000;  // bf16 per rank
  FakeColl bc = ag;
  bc.func = "Broadcast";
  bc.seq = 0;
  bc.datatype = "ncclFloat16";
  comm.Collective(ag);
  comm.Collective(bc);
  EXPECT_EQ(
      TelemetryDoubleCalls(),
      (std::vector<RecordedCall>{
          Count(kComm, "allGather", "bf16", 8000, "nccl"),
          Expected(kComm, "allGather", "bf16", 8000, "nccl:algo=ring,proto=ll128", 0, 4100, 4),
          Count(kComm, "broadcast", "fp16", 2000, "nccl"),
          Expected(kComm, "broadcast", "fp16", 2000, "nccl:algo=ring,proto=ll128", 0, 4100, 4)}));
}

// Graph-captured calls: NCCL does not advance its number for them (the plugin's Group and
// CollApi get no handle), the plugin's count did; the next timed Coll re-syncs it, so the
// eager calls after the capture are timed exactly where the matcher samples.
TEST_F(ProfilerPluginTest, ATimedCollResyncsTheCountAfterGraphCapture) {
  ScopedEnv env({{"CCLTUNE_TELEMETRY", "on"}});
  FakeComm comm(lib_, 5, kComm, 0, 4);
  FakeColl captured = AllReduce(0);
  captured.seq.reset();
  captured.graph_captured = true;
  for (int i = 0; i < 10; ++i) comm.Collective(captured);
  FakeColl eager = captured;
  eager.graph_captured = false;
  for (int i = 0; i < 1100; ++i) comm.Collective(eager);
  EXPECT_EQ(TelemetryDoubleCounts().size(), 1110u);
  std::vector<std::uint64_t> expected(10, 0);  // the captured ones, all NCCL's number 0
  Range(expected, 0, 63);
  Range(expected, 1024, 1087);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(Seqs(TelemetryDoubleTimes(), "allReduce"), expected);
}

// Inside a capture every next call is timed (its replays are the program's calls from then on):
// far from a sampled window, the captured calls after the first carry kernel-channel timing,
// and the first eager call after the capture does too (decided by the last captured call).
TEST_F(ProfilerPluginTest, CapturedCallsAreTimedWhateverTheirNumber) {
  ScopedEnv env({{"CCLTUNE_TELEMETRY", "on"}});
  FakeComm comm(lib_, 5, kComm, 0, 4);
  FakeColl eager = AllReduce(0);
  eager.seq.reset();
  for (int i = 0; i < 100; ++i) comm.Collective(eager);  // numbers 0..99: 64..99 untimed
  FakeColl captured = eager;
  captured.graph_captured = true;
  std::vector<int> masks;
  for (int i = 0; i < 5; ++i) {
    const Launch l = comm.Begin(captured);
    masks.push_back(l.mask);
    comm.End(l);
    comm.Channels(l, captured);
  }
  EXPECT_EQ(masks, (std::vector<int>{kIdle, kSampled, kSampled, kSampled, kSampled}));
  const Launch after = comm.Begin(eager);
  EXPECT_EQ(after.mask, kSampled);
  comm.End(after);
  comm.Channels(after, eager);
  EXPECT_EQ(comm.mask(), kIdle);  // back to the eager stream's rule: number 107 is not sampled
}

// A Coll whose parent is another context's (or nothing we know): the Coll is what carries the
// call, timed and recorded under the context NCCL passed.
TEST_F(ProfilerPluginTest, ACollWithAParentFromAnotherContextIsRecordedUnderItsOwn) {
  ScopedEnv env({{"CCLTUNE_TELEMETRY", "on"}});
  FakeComm a(lib_, 5, 21, 0, 4);
  FakeComm b(lib_, 5, 22, 1, 4);
  const FakeColl c = AllReduce(5);
  const Launch from_b = b.Begin(c);  // b's Coll, in flight
  ASSERT_NE(from_b.coll, nullptr);
  Launch l;
  l.mask = kSampled;
  l.coll = a.StartCollRaw(c, 5, from_b.coll);
  ASSERT_NE(l.coll, nullptr);
  // b's Coll handle is no channel parent for a.
  EXPECT_EQ(a.StartRaw(abi::kProfileKernelCh, from_b.coll), nullptr);
  a.End(l);
  a.Channels(l, c);
  EXPECT_EQ(TelemetryDoubleTimes(),
            (std::vector<RecordedCall>{Expected(21, "allReduce", "bf16", 524288,
                                                "nccl:algo=ring,proto=ll128", 5, 4100, 4)}));
  b.End(from_b);
  b.Channels(from_b, c);
  EXPECT_EQ(TelemetryDoubleTimes().size(), 2u);
  EXPECT_EQ(TelemetryDoubleTimes().back().comm_hash, 22u);
}

// v4 (NCCL 2.27) has no CollApi to count by: every call timed, one record each, flags 0.
TEST_F(ProfilerPluginTest, V4TimesEveryCall) {
  ScopedEnv env({{"CCLTUNE_TELEMETRY", "on"}});
  FakeComm comm(lib_, 4, kComm, 0, 4);
  FakeColl c = AllReduce(0);
  c.seq.reset();
  for (int i = 0; i < 2100; ++i) comm.Collective(c);
  EXPECT_EQ(comm.mask(), kAlways);
  const auto calls = TelemetryDoubleCalls();
  ASSERT_EQ(calls.size(), 2100u);
  for (std::size_t i = 0; i < calls.size(); ++i)
    ASSERT_EQ(calls[i], Expected(kComm, "allReduce", "bf16", 524288, "nccl:algo=ring,proto=ll128",
                                 i, 4100, 4, 0));
}

}  // namespace
}  // namespace ccltune::testing

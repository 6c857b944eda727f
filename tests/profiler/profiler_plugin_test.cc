// The profiler plugin driven by a fake NCCL (fake_nccl.h) through its exported v6, v5 and v4
// tables, in the order NCCL 2.27-2.29 call it, with exact inputs; what it calls in
// libccltune-telemetry is kept by the test double (telemetry_double.h) and compared exactly.
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
constexpr int kOn = static_cast<int>(abi::kProfileColl | abi::kProfileKernelCh);

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

RecordedCall Expected(std::uint64_t comm, const std::string& op, const std::string& dtype,
                      std::uint64_t bytes, const std::string& choice, std::uint64_t seq,
                      std::uint64_t total_ns, int channels) {
  return {comm, op, dtype, bytes, choice, seq, total_ns, ccltuneTelemetrySplitNone, 0, 0, channels};
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
    EXPECT_EQ(comm.mask(), kOn);
    comm.Collective(AllReduce(7));
  }
  EXPECT_EQ(TelemetryDoubleComms(), (std::vector<RecordedComm>{{kComm, 2, 4, -1}}));
  // 5100 (the last stop) - 1000 (the first start).
  EXPECT_EQ(TelemetryDoubleCalls(),
            (std::vector<RecordedCall>{Expected(kComm, "allReduce", "bf16", 524288,
                                                "nccl:algo=ring,proto=ll128", 7, 4100, 4)}));
  EXPECT_TRUE(TelemetryDoubleDrops().empty());
}

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
    FakeComm v6(lib_, 6, 12, 1, 8);
    EXPECT_EQ(v4.mask(), kOn);
    EXPECT_EQ(v6.mask(), kOn);
    v4.Collective(ag);
    v6.Collective(rs);
  }
  EXPECT_EQ(TelemetryDoubleComms(), (std::vector<RecordedComm>{{11, 0, 8, -1}, {12, 1, 8, -1}}));
  EXPECT_EQ(
      TelemetryDoubleCalls(),
      (std::vector<RecordedCall>{
          Expected(11, "allGather", "fp32", 32768, "nccl:algo=nvlstree,proto=simple", 3, 800, 2),
          Expected(12, "reduceScatter", "fp32", 32768, "nccl:algo=pat,proto=ll", 3, 800, 2)}));
}

TEST_F(ProfilerPluginTest, ChannelsThatFinishBeforeTheCollStopsAreCountedOnce) {
  ScopedEnv env({{"CCLTUNE_TELEMETRY", "on"}});
  FakeComm comm(lib_, 5, kComm, 0, 4);
  const FakeColl c = AllReduce(9);
  const Launch l = comm.Begin(c);
  comm.Channels(l, c);  // the proxy thread ran ahead of the launching thread
  EXPECT_TRUE(TelemetryDoubleCalls().empty());  // the Coll has not stopped yet
  comm.End(l);
  EXPECT_EQ(TelemetryDoubleCalls(),
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
  for (int i = 0; i < 5; ++i) EXPECT_EQ(comm.Begin(AllReduce(100 + i)).coll, nullptr);
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
  EXPECT_EQ(TelemetryDoubleCalls().size(), 16u);
  comm.Collective(AllReduce(200));  // room again
  ASSERT_EQ(TelemetryDoubleCalls().size(), 17u);
  EXPECT_EQ(TelemetryDoubleCalls().back().seq, 200u);
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
  EXPECT_EQ(TelemetryDoubleCalls(),
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
  EXPECT_EQ(TelemetryDoubleCalls(),
            (std::vector<RecordedCall>{Expected(kComm, "allReduce", "bf16", 524288,
                                                "nccl:algo=ring,proto=ll128", 3, 10, 1)}));
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

TEST_F(ProfilerPluginTest, AProxyThreadBesideTheLaunchingThreadLosesNothing) {
  ScopedEnv env({{"CCLTUNE_TELEMETRY", "on"}, {"CCLTUNE_PROFILER_EVENTS", "65536"}});
  constexpr int kCalls = 20000;
  FakeComm comm(lib_, 5, kComm, 0, 4);
  std::vector<Launch> launched(kCalls);
  std::atomic<int> ready{0};
  std::thread proxy([&] {
    for (int i = 0; i < kCalls; ++i) {
      while (ready.load(std::memory_order_acquire) <= i) std::this_thread::yield();
      comm.Channels(launched[i], AllReduce(i));
    }
  });
  for (int i = 0; i < kCalls; ++i) {
    const FakeColl c = AllReduce(i);
    launched[i] = comm.Begin(c);
    ready.store(i + 1, std::memory_order_release);  // NCCL's proxy queue orders this
    comm.End(launched[i]);
  }
  proxy.join();
  auto calls = TelemetryDoubleCalls();
  ASSERT_EQ(calls.size(), static_cast<std::size_t>(kCalls));
  std::sort(calls.begin(), calls.end(),
            [](const RecordedCall& a, const RecordedCall& b) { return a.seq < b.seq; });
  for (int i = 0; i < kCalls; ++i) {
    EXPECT_EQ(calls[i].seq, static_cast<std::uint64_t>(i));
    EXPECT_EQ(calls[i].total_ns, 4100u);
  }
  EXPECT_TRUE(TelemetryDoubleDrops().empty());
}

}  // namespace
}  // namespace ccltune::testing

// The parts of libccltune-telemetry without their threads: settings (each variable's error),
// labels, the call queue's drops, the min-over-ranks windows and match, the wait ratio, and
// the families' exposition (exact series, then `promtool check metrics`).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "core/telemetry/abi_read.h"
#include "core/telemetry/call_queue.h"
#include "core/telemetry/program_metrics.h"
#include "core/telemetry/rank_matcher.h"
#include "core/telemetry/telemetry_settings.h"
#include "core/telemetry/wait_ratio.h"
#include "tests/metrics/child_process.h"
#include "tests/telemetry/samples.h"

namespace ccltune::telemetry {
namespace {

using namespace std::chrono_literals;
using Env = std::map<std::string, std::string>;
using testing::Samples;

EnvLookup Lookup(const Env& env) {
  return [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
}

TelemetrySettings Read(const Env& env, std::vector<core::Status>* errors) {
  return ReadTelemetrySettings(Lookup(env), errors);
}

TEST(TelemetrySettings, OffUnlessAskedAndNothingElseIsRead) {
  std::vector<core::Status> errors;
  EXPECT_FALSE(Read({{"CCLTUNE_METRICS_PORT", "x"}}, &errors).enabled);
  EXPECT_FALSE(
      Read({{"CCLTUNE_TELEMETRY", "off"}, {"CCLTUNE_METRICS_PORT", "x"}}, &errors).enabled);
  EXPECT_TRUE(errors.empty());
}

TEST(TelemetrySettings, GoodValues) {
  std::vector<core::Status> errors;
  const Env env = {{"CCLTUNE_TELEMETRY", "on"},
                   {"CCLTUNE_METRICS_PORT", "0"},
                   {"SLURM_LOCALID", "3"},
                   {"OMPI_COMM_WORLD_LOCAL_RANK", "x"},  // not read: SLURM_LOCALID comes first
                   {"CCLTUNE_PUSHGATEWAY", "http://gw.monitoring:9091/prefix/"},
                   {"CCLTUNE_TELEMETRY_PUSH_SECONDS", "0.5"},
                   {"CCLTUNE_TELEMETRY_QUEUE", "16"},
                   {"CCLTUNE_REDIS_URL", "redis://r:6380/2"},
                   {"CCLTUNE_REDIS_USERNAME", "ccltune-telemetry"},
                   {"CCLTUNE_REDIS_PASSWORD", "pw"},
                   {"CCLTUNE_POD_NAME", "trainer-0"}};
  const TelemetrySettings s = Read(env, &errors);
  ASSERT_TRUE(errors.empty()) << errors[0].ToString();
  EXPECT_TRUE(s.enabled);
  EXPECT_EQ(s.metrics_port, 0);
  EXPECT_EQ(s.local_rank, 3);
  ASSERT_TRUE(s.push);
  EXPECT_EQ(s.push->host, "http://gw.monitoring");
  EXPECT_EQ(s.push->port, "9091/prefix");
  EXPECT_EQ(s.push_seconds, 0.5);
  EXPECT_EQ(s.queue_calls, 16u);
  ASSERT_TRUE(s.redis);
  EXPECT_EQ(s.redis->port, 6380);
  EXPECT_EQ(s.redis->db, 2);
  EXPECT_EQ(s.redis->password, "ccltune-telemetry:pw");
  EXPECT_EQ(s.pod_name, "trainer-0");
  EXPECT_EQ(s.pod_namespace, "");
}

// Each bad value: exactly one error, naming the variable and what it allows; telemetry off.
TEST(TelemetrySettings, EachBadValueNamesItsVariable) {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"CCLTUNE_TELEMETRY", "yes", "CCLTUNE_TELEMETRY: 'yes' is not one of on, off (the default)"},
      {"CCLTUNE_METRICS_PORT", "70000",
       "CCLTUNE_METRICS_PORT: '70000' is not a port: 0 (no endpoint) or 1-65535 (default 9464; "
       "the local rank is added)"},
      {"LOCAL_RANK", "-1", "LOCAL_RANK: '-1' is not a local rank: an integer 0-65535"},
      {"SLURM_LOCALID", "a", "SLURM_LOCALID: 'a' is not a local rank: an integer 0-65535"},
      {"OMPI_COMM_WORLD_LOCAL_RANK", "1.5",
       "OMPI_COMM_WORLD_LOCAL_RANK: '1.5' is not a local rank: an integer 0-65535"},
      {"CCLTUNE_PUSHGATEWAY", "gw:9091",
       "CCLTUNE_PUSHGATEWAY: 'gw:9091' is not http[s]://host[:port][/prefix]: the scheme must "
       "be http or https"},
      {"CCLTUNE_TELEMETRY_PUSH_SECONDS", "0",
       "CCLTUNE_TELEMETRY_PUSH_SECONDS: '0' is not a number of seconds from 0.1 to 86400 "
       "(default 15)"},
      {"CCLTUNE_TELEMETRY_QUEUE", "8",
       "CCLTUNE_TELEMETRY_QUEUE: '8' is not a number of calls from 16 to 16777216 (default "
       "65536)"},
  };
  for (const auto& [name, value, line] : cases) {
    Env env = {{"CCLTUNE_TELEMETRY", "on"}};
    env[name] = value;
    std::vector<core::Status> errors;
    EXPECT_FALSE(Read(env, &errors).enabled) << name;
    ASSERT_EQ(errors.size(), 1u) << name;
    EXPECT_EQ(errors[0].message(), line);
  }
  std::vector<core::Status> errors;
  Read({{"CCLTUNE_TELEMETRY", "on"}, {"CCLTUNE_REDIS_URL", "http://r"}}, &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message(),
            "CCLTUNE_REDIS_URL: the value is not redis://[[user]:password@]host[:port][/db] "
            "(not shown: it may hold a password)");
}

TEST(TelemetryLabels, SizeIsTheNearestPowerOfTwo) {
  EXPECT_EQ(SizeLabel(0), "0");
  EXPECT_EQ(SizeLabel(1), "1");
  EXPECT_EQ(SizeLabel(3), "4");
  EXPECT_EQ(SizeLabel(1000), "1KiB");
  EXPECT_EQ(SizeLabel(1536), "2KiB");  // a tie goes up
  EXPECT_EQ(SizeLabel(1535), "1KiB");
  EXPECT_EQ(SizeLabel(3000), "2KiB");
  EXPECT_EQ(SizeLabel(262144), "256KiB");
  EXPECT_EQ(SizeLabel(200 << 20), "256MiB");
  EXPECT_EQ(CommLabel(0xdeadbeef), "00000000deadbeef");
  EXPECT_EQ(SourceOf("nccl"), "nccl");
  EXPECT_EQ(SourceOf("nccl:algo=ring,proto=ll"), "nccl");
  EXPECT_EQ(SourceOf("oneshot:mode=pull"), "ccltune");
  EXPECT_EQ(SourceOf("ncclx"), "ccltune");
}

TEST(CallQueue, AFullQueueRefusesAndCounts) {
  CallQueue q(16);
  ASSERT_EQ(q.capacity(), 16u);
  for (std::uint64_t i = 0; i < 20; ++i) EXPECT_EQ(q.TryPush(CallRecord{.seq = i}), i < 16);
  EXPECT_EQ(q.TakeDropped(), 4u);
  EXPECT_EQ(q.TakeDropped(), 0u);
  CallRecord c;
  for (std::uint64_t i = 0; i < 16; ++i) {
    ASSERT_TRUE(q.TryPop(&c));
    EXPECT_EQ(c.seq, i);
  }
  EXPECT_FALSE(q.TryPop(&c));
  EXPECT_TRUE(q.TryPush(CallRecord{.seq = 99}));
}

// Producers on four threads, the consumer on this one: every call is popped once or
// counted as dropped, and each producer's calls come out in its order.
TEST(CallQueue, ProducersLoseNothingUncounted) {
  CallQueue q(64);
  constexpr std::uint64_t kPerThread = 20000;
  std::vector<std::thread> producers;
  for (std::uint64_t t = 0; t < 4; ++t)
    producers.emplace_back([&q, t] {
      for (std::uint64_t i = 0; i < kPerThread; ++i)
        q.TryPush(CallRecord{.comm_hash = t, .seq = i});
    });
  std::uint64_t popped = 0, dropped = 0;
  std::map<std::uint64_t, std::uint64_t> next;
  CallRecord c;
  auto drain = [&] {
    while (q.TryPop(&c)) {
      ++popped;
      EXPECT_GE(c.seq, next[c.comm_hash]);
      next[c.comm_hash] = c.seq + 1;
    }
    dropped += q.TakeDropped();
  };
  while (popped + dropped < 4 * kPerThread) drain();
  for (auto& p : producers) p.join();
  drain();
  EXPECT_EQ(popped + dropped, 4 * kPerThread);
}

CallRecord Nccl(std::uint64_t seq, std::uint64_t total_ns) {
  return CallRecord{.comm_hash = 7,
                    .op = "allReduce",
                    .dtype = "bf16",
                    .choice = "nccl:algo=ring,proto=ll",
                    .bytes = 4096,
                    .seq = seq,
                    .total_ns = total_ns};
}

TEST(RankMatcher, SampledWindowsAndKeys) {
  EXPECT_TRUE(Sampled(0));
  EXPECT_TRUE(Sampled(63));
  EXPECT_FALSE(Sampled(64));
  EXPECT_TRUE(Sampled(1024 * 5 + 10));
  EXPECT_FALSE(Sampled(UINT64_MAX));
  EXPECT_EQ(WindowKey(0xabc, "allGather", 5), "ccltune:v1:telemetry:0000000000000abc:allGather:5");
  const std::vector<CallRecord> calls = {Nccl(3, 1000), Nccl(1ull << 40, 7)};
  std::string packed = PackTimes(calls);
  ASSERT_EQ(packed.size(), 32u);
  EXPECT_EQ((UnpackTimes(packed)),
            (std::map<std::uint64_t, std::uint64_t>{{3, 1000}, {1ull << 40, 7}}));
  packed.pop_back();  // a truncated peer value keeps its whole entries only
  EXPECT_EQ(UnpackTimes(packed).size(), 1u);
}

TEST(RankMatcher, WaitIsOwnMinusTheMinimumOverRanks) {
  const std::vector<CallRecord> own = {Nccl(0, 500), Nccl(1, 900), Nccl(2, 300)};
  const std::vector<std::map<std::uint64_t, std::uint64_t>> ranks = {
      {{0, 500}, {1, 900}, {2, 300}},  // this rank's own post
      {{0, 200}, {1, 950}, {2, 300}},
      {{0, 350}, {1, 100}}};  // seq 2 missing on this rank: not matched
  const std::vector<MatchedCall> m = MatchCalls(own, ranks);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].call.seq, 0u);
  EXPECT_EQ(m[0].wait_ns, 300u);
  EXPECT_EQ(m[0].transfer_ns, 200u);
  EXPECT_EQ(m[1].call.seq, 1u);
  EXPECT_EQ(m[1].wait_ns, 800u);
  EXPECT_EQ(m[1].transfer_ns, 100u);
}

TEST(RankMatcher, AWindowIsReadyWhenFullPassedOrIdle) {
  const CommInfo comm{7, 1, 2, 0};
  const auto t0 = Clock::now();
  WindowCollector full;
  for (std::uint64_t s = 0; s < kSampledCalls; ++s) ASSERT_TRUE(full.Add(comm, Nccl(s, 1), t0));
  ASSERT_EQ(full.TakeReady(t0).size(), 1u);

  WindowCollector passed;
  ASSERT_TRUE(passed.Add(comm, Nccl(1, 1), t0));
  EXPECT_TRUE(passed.TakeReady(t0).empty());
  ASSERT_TRUE(passed.Add(comm, Nccl(kSampledCalls, 1), t0));  // unsampled: only progress
  auto ready = passed.TakeReady(t0);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].calls.size(), 1u);

  WindowCollector idle;
  ASSERT_TRUE(idle.Add(comm, Nccl(2, 1), t0));
  EXPECT_TRUE(idle.TakeReady(t0 + kPostAfterIdle / 2).empty());
  EXPECT_EQ(idle.TakeReady(t0 + kPostAfterIdle).size(), 1u);

  WindowCollector backlog;
  for (std::uint64_t w = 0; w < kMaxOpenWindows; ++w)
    ASSERT_TRUE(backlog.Add(CommInfo{w, 0, 2, 0}, Nccl(0, 1), t0));
  EXPECT_FALSE(backlog.Add(CommInfo{kMaxOpenWindows, 0, 2, 0}, Nccl(0, 1), t0));
}

// The duty cycle's records: an untimed one (a count) is never kept and never shows that a
// window is over; a COUNTED one (the times of a call counted before) is kept as flags 0.
TEST(RankMatcher, UntimedRecordsAreNeitherKeptNorProgress) {
  const CommInfo comm{7, 1, 2, 0};
  const auto t0 = Clock::now();
  WindowCollector c;
  CallRecord untimed = Nccl(3, 0);
  untimed.flags = CCLTUNE_TELEMETRY_CALL_UNTIMED;
  ASSERT_TRUE(c.Add(comm, untimed, t0));
  EXPECT_TRUE(c.TakeReady(t0 + kPostAfterIdle).empty());  // nothing was kept
  CallRecord timed = Nccl(1, 500);
  timed.flags = CCLTUNE_TELEMETRY_CALL_COUNTED;
  ASSERT_TRUE(c.Add(comm, timed, t0));
  CallRecord later = Nccl(kWindowCalls + kSampledCalls, 0);  // past window 0, untimed
  later.flags = CCLTUNE_TELEMETRY_CALL_UNTIMED;
  ASSERT_TRUE(c.Add(comm, later, t0));
  EXPECT_TRUE(c.TakeReady(t0).empty());  // window 0 is still open: the untimed seq did not pass it
  const auto ready = c.TakeReady(t0 + kPostAfterIdle);
  ASSERT_EQ(ready.size(), 1u);
  ASSERT_EQ(ready[0].calls.size(), 1u);
  EXPECT_EQ(ready[0].calls[0].seq, 1u);
  EXPECT_EQ(ready[0].calls[0].total_ns, 500u);
}

TEST(WaitRatio, OverTheLastTenSeconds) {
  WaitRatio r;
  r.Add(7, 0, 100, 10, 100);
  r.Add(7, 0, 105, 30, 100);
  r.Add(8, 1, 100, 1, 4);
  auto at = [&](std::int64_t s) {
    std::map<std::pair<std::uint64_t, int>, double> out;
    for (const auto& x : r.Ratios(s)) out[{x.comm_hash, x.rank}] = x.ratio;
    return out;
  };
  EXPECT_DOUBLE_EQ((at(105)[{7, 0}]), 0.2);
  EXPECT_DOUBLE_EQ((at(105)[{8, 1}]), 0.25);
  EXPECT_DOUBLE_EQ((at(110)[{7, 0}]), 0.3);  // second 100 has left the window
  EXPECT_DOUBLE_EQ((at(110)[{8, 1}]), 0.0);
  r.Add(7, 0, 110, 0, 100);  // reuses second 100's slot
  EXPECT_DOUBLE_EQ((at(110)[{7, 0}]), 0.15);
}

Samples Parse(const std::string& text, const std::string& prefix) {
  return testing::ParseSamples(text, prefix);
}

TEST(ProgramMetrics, KernelSplitSeriesAndPromtool) {
  core::Registry registry;
  auto m = ProgramMetrics::Create(registry);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const CallRecord c{.comm_hash = 0xab,
                     .op = "allReduce",
                     .dtype = "bf16",
                     .choice = "oneshot:mode=pull",
                     .bytes = 3000,
                     .seq = 0,
                     .total_ns = 10000,
                     .split = ccltuneTelemetrySplitKernel,
                     .wait_ns = 4000,
                     .transfer_ns = 6000};
  (*m)->ObserveCall(c, 2);
  (*m)->ObserveCall(c, 2);
  const std::string text = registry.Text();
  const std::string l =
      "{comm=\"00000000000000ab\",rank=\"2\",op=\"allReduce\",dtype=\"bf16\",size=\"2KiB\","
      "choice=\"oneshot:mode=pull\",method=\"kernel\"";
  auto wait = Parse(text, "ccltune_program_sync_wait_seconds");
  EXPECT_EQ(wait.size(), 22u) << text;  // 19 bounds, +Inf, _sum, _count
  EXPECT_EQ(wait["ccltune_program_sync_wait_seconds_count" + l + "}"], "2");
  EXPECT_EQ(wait["ccltune_program_sync_wait_seconds_sum" + l + "}"], "8e-06");
  EXPECT_EQ(wait["ccltune_program_sync_wait_seconds_bucket" + l + ",le=\"2e-06\"}"], "0");
  EXPECT_EQ(wait["ccltune_program_sync_wait_seconds_bucket" + l + ",le=\"5e-06\"}"], "2");
  EXPECT_EQ(wait["ccltune_program_sync_wait_seconds_bucket" + l + ",le=\"1\"}"], "2");
  auto transfer = Parse(text, "ccltune_program_transfer_seconds_sum");
  EXPECT_EQ(transfer["ccltune_program_transfer_seconds_sum" + l + "}"], "1.2e-05") << text;
  EXPECT_EQ(
      Parse(text, "ccltune_program_calls_total"),
      (std::map<std::string, std::string>{
          {"ccltune_program_calls_total{comm=\"00000000000000ab\",rank=\"2\",op=\"allReduce\","
           "choice=\"oneshot:mode=pull\",source=\"ccltune\"}",
           "2"}}));
  auto out = testing::RunCommand({"promtool", "check", "metrics"}, text, 30s);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->exit_code, 0) << out->output << "\n--- exposition:\n" << text;
}

// The duty cycle's two records of one call: UNTIMED moves only calls_total, COUNTED only the
// histograms (and the split); flags 0 both, as before.
TEST(ProgramMetrics, UntimedCountsOnlyAndCountedTimesOnly) {
  core::Registry registry;
  auto m = ProgramMetrics::Create(registry);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  CallRecord c{.comm_hash = 0xab,
               .op = "allReduce",
               .dtype = "bf16",
               .choice = "nccl:algo=ring,proto=ll",
               .bytes = 4096,
               .seq = UINT64_MAX,
               .total_ns = 0};
  const std::string calls =
      "ccltune_program_calls_total{comm=\"00000000000000ab\",rank=\"1\",op=\"allReduce\","
      "choice=\"nccl:algo=ring,proto=ll\",source=\"nccl\"}";
  const std::string count =
      "ccltune_program_collective_seconds_count{comm=\"00000000000000ab\",rank=\"1\","
      "op=\"allReduce\",dtype=\"bf16\",size=\"4KiB\",choice=\"nccl:algo=ring,proto=ll\","
      "source=\"nccl\"}";
  const std::string sum = "ccltune_program_collective_seconds_sum" + count.substr(count.find('{'));
  auto value = [&](const std::string& series) {
    return testing::SampleValue(Parse(registry.Text(), "ccltune_program_"), series);
  };
  c.flags = CCLTUNE_TELEMETRY_CALL_UNTIMED;
  for (int i = 0; i < 3; ++i) (*m)->ObserveCall(c, 1);
  EXPECT_EQ(value(calls), 3);
  EXPECT_TRUE(std::isnan(value(count))) << registry.Text();  // no histogram series at all
  c.flags = CCLTUNE_TELEMETRY_CALL_COUNTED;
  c.seq = 5;
  c.total_ns = 2000;
  (*m)->ObserveCall(c, 1);
  EXPECT_EQ(value(calls), 3);
  EXPECT_EQ(value(count), 1);
  EXPECT_EQ(value(sum), 2e-06);
  c.flags = 0;  // today's single record: both
  (*m)->ObserveCall(c, 1);
  EXPECT_EQ(value(calls), 4);
  EXPECT_EQ(value(count), 2);
  c.flags = CCLTUNE_TELEMETRY_CALL_UNTIMED | CCLTUNE_TELEMETRY_CALL_COUNTED;  // neither
  (*m)->ObserveCall(c, 1);
  EXPECT_EQ(value(calls), 4);
  EXPECT_EQ(value(count), 2);
}

// A caller built before `flags` (96 bytes, its padding and beyond unset) reads as flags 0;
// a caller of today's layout is read whole.
TEST(CallAbi, AShortStructReadsAsFlagsZero) {
  struct Padded {
    ccltuneTelemetryCall_t call;
    unsigned char beyond[16];
  } p;
  std::memset(&p, 0xff, sizeof p);  // garbage wherever the caller wrote nothing
  p.call.size = 96;
  p.call.comm_hash = 9;
  p.call.op = "allReduce";
  p.call.dtype = "fp32";
  p.call.bytes = 64;
  p.call.choice = "nccl";
  p.call.seq = 4;
  p.call.total_ns = 100;
  p.call.split = ccltuneTelemetrySplitNone;
  p.call.wait_ns = 0;
  p.call.transfer_ns = 0;
  p.call.channels = 2;
  const CallRecord old = CallFromAbi(&p.call);
  EXPECT_EQ(old.flags, 0u);
  EXPECT_EQ(old.channels, 2);
  EXPECT_EQ(old.seq, 4u);
  EXPECT_TRUE(CountsCall(old) && HasTimes(old));
  p.call.size = sizeof(ccltuneTelemetryCall_t);
  p.call.flags = CCLTUNE_TELEMETRY_CALL_UNTIMED;
  const CallRecord now = CallFromAbi(&p.call);
  EXPECT_EQ(now.flags, CCLTUNE_TELEMETRY_CALL_UNTIMED);
  EXPECT_TRUE(CountsCall(now));
  EXPECT_FALSE(HasTimes(now));
}

// Each labelled family stops at kMaxLabelSets; the rest is counted, not exported.
TEST(ProgramMetrics, EachFamilyIsCappedAt512LabelSets) {
  core::Registry registry;
  auto m = ProgramMetrics::Create(registry);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  for (int i = 0; i < 600; ++i) (*m)->Forwarded("reason-" + std::to_string(i), 1);
  const std::string text = registry.Text();
  EXPECT_EQ(Parse(text, "ccltune_program_forwarded_calls_total{").size(), kMaxLabelSets);
  const std::string dropped =
      "ccltune_metrics_label_sets_dropped_total{family=\"ccltune_program_forwarded_calls_total\"}";
  EXPECT_EQ(testing::SampleValue(Parse(text, dropped), dropped), 88) << text;
}

}  // namespace
}  // namespace ccltune::telemetry

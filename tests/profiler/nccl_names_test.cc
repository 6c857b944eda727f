// NCCL's descriptor strings → ccltune's names, bytes and choice; the setting's parser; the
// event pool's bounds; the duty cycle's sampling rule and masks; the choice table. No plugin
// .so needed.
#include "plugin/profiler/nccl_names.h"

#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "core/telemetry/rank_matcher.h"
#include "plugin/profiler/choice_table.h"
#include "plugin/profiler/coll_event_pool.h"
#include "plugin/profiler/duty_cycle.h"
#include "plugin/profiler/profiler_settings.h"

namespace ccltune::plugin::profiler {
namespace {

TEST(NcclNames, OpsKeyBytesAsTheTuneDoes) {
  // allReduce: count x size; allGather, reduceScatter: NCCL's per-rank count x nranks x size.
  EXPECT_EQ(CallBytes(LookupOp("AllReduce"), LookupDtype("ncclBfloat16"), 262144, 4), 524288u);
  EXPECT_EQ(CallBytes(LookupOp("AllGather"), LookupDtype("ncclFloat32"), 1024, 8), 32768u);
  EXPECT_EQ(CallBytes(LookupOp("ReduceScatter"), LookupDtype("ncclFloat16"), 100, 4), 800u);
  EXPECT_EQ(CallBytes(LookupOp("AlltoAll"), LookupDtype("ncclInt8"), 10, 4), 40u);
  EXPECT_EQ(CallBytes(LookupOp("Broadcast"), LookupDtype("ncclInt32"), 10, 4), 40u);
  EXPECT_STREQ(LookupOp("AllReduce").name, "allReduce");
  EXPECT_STREQ(LookupOp("ReduceScatter").name, "reduceScatter");
  EXPECT_STREQ(LookupOp("AlltoAll").name, "allToAll");
  EXPECT_STREQ(LookupOp("PutSignal").name, "unknown");
  EXPECT_STREQ(LookupOp("").name, "unknown");
}

TEST(NcclNames, DtypesOfNccl227To229) {
  EXPECT_STREQ(LookupDtype("ncclBfloat16").name, "bf16");
  EXPECT_STREQ(LookupDtype("ncclFloat8e4m3").name, "fp8e4m3");
  EXPECT_EQ(LookupDtype("ncclFloat64").size, 8u);
  // NCCL names ncclUint8 "Unknown": one byte, reported as unknown.
  EXPECT_STREQ(LookupDtype("Unknown").name, "unknown");
  EXPECT_EQ(LookupDtype("Unknown").size, 1u);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::erase(s, '_');
  return s;
}

TEST(NcclNames, EveryAlgorithmAndProtocolHasItsSortedChoiceName) {
  for (const char* algo :
       {"RING", "TREE", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"}) {
    for (const char* proto : {"LL", "LL128", "SIMPLE"}) {
      EXPECT_EQ(std::string(ChoiceName(algo, proto)),
                "nccl:algo=" + Lower(algo) + ",proto=" + Lower(proto));
    }
  }
  EXPECT_STREQ(ChoiceName("Unknown", "LL"), "nccl");
  EXPECT_STREQ(ChoiceName("RING", ""), "nccl");
}

TEST(ProfilerSettings, InFlightIsStrict) {
  EXPECT_EQ(ReadInFlightSetting(nullptr).value, kDefaultInFlight);
  EXPECT_EQ(ReadInFlightSetting("16").value, 16u);
  EXPECT_EQ(ReadInFlightSetting("65536").value, 65536u);
  for (const char* bad : {"", "15", "65537", "1k", "-1", " 64", "64 "}) {
    const InFlightSetting s = ReadInFlightSetting(bad);
    EXPECT_EQ(s.error, std::string("CCLTUNE_PROFILER_EVENTS=\"") + bad +
                           "\": expected an integer 16..65536");
  }
}

TEST(CollEventPool, HandsOutCapacityEventsThenNothingUntilOneReturns) {
  int owner = 0;
  CollEventPool pool(16, &owner);
  std::vector<CollEvent*> taken;
  for (int i = 0; i < 16; ++i) taken.push_back(pool.Acquire());
  for (CollEvent* e : taken) {
    ASSERT_NE(e, nullptr);
    EXPECT_TRUE(pool.Contains(e));
    EXPECT_EQ(e->owner, &owner);
  }
  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.in_use(), 16u);
  taken[5]->last_stop = 7;
  pool.Release(taken[5]);
  CollEvent* again = pool.Acquire();
  EXPECT_EQ(again, taken[5]);
  EXPECT_EQ(again->last_stop.load(), 0u);
  EXPECT_EQ(again->first_start.load(), kNoStart);
  EXPECT_FALSE(pool.Contains(reinterpret_cast<char*>(taken[0]) + 1));
  EXPECT_FALSE(pool.Contains(&owner));
  EXPECT_FALSE(pool.Contains(nullptr));
}

// The plugin times what the library's matcher samples: the same constants (the C header's),
// the same rule as rank_matcher.cc's Sampled().
TEST(DutyCycle, TimesWhatTheMatcherSamples) {
  EXPECT_EQ(telemetry::kWindowCalls, 1024u);
  EXPECT_EQ(telemetry::kSampledCalls, 64u);
  for (std::uint64_t seq = 0; seq < 3 * telemetry::kWindowCalls; ++seq)
    ASSERT_EQ(TimedSeq(seq), seq % telemetry::kWindowCalls < telemetry::kSampledCalls) << seq;
  EXPECT_TRUE(TimedSeq(0) && TimedSeq(63) && !TimedSeq(64) && TimedSeq(1024) && !TimedSeq(1023));
  EXPECT_EQ(kIdleMask, 1 << 9);                             // CollApi
  EXPECT_EQ(kSampledMask, (1 << 9) | (1 << 1) | (1 << 6));  // + Coll, KernelCh
  EXPECT_EQ(kAlwaysMask, 0x42);
  EXPECT_EQ(MaskFor(64), kIdleMask);
  EXPECT_EQ(MaskFor(2048), kSampledMask);
}

TEST(NcclNames, ChoiceAndDtypeIdsRoundTrip) {
  for (const char* algo :
       {"RING", "TREE", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT", "BOGUS"}) {
    for (const char* proto : {"LL", "LL128", "SIMPLE", "BOGUS"}) {
      EXPECT_STREQ(ChoiceById(ChoiceId(algo, proto)), ChoiceName(algo, proto)) << algo << proto;
    }
  }
  EXPECT_EQ(ChoiceId("RING", "BOGUS"), 0);
  EXPECT_STREQ(ChoiceById(0), "nccl");
  EXPECT_STREQ(ChoiceById(200), "nccl");
  EXPECT_STREQ(DtypeById(LookupDtype("ncclBfloat16").id).name, "bf16");
  EXPECT_STREQ(DtypeById(0).name, "unknown");
  EXPECT_EQ(LookupOp("Broadcast").id, 5);
  EXPECT_EQ(LookupOp("Send").id, 0);
}

// (op, bytes) -> the choice a timed Coll saw and the dtype the CollApi gave.
TEST(ChoiceTable, RemembersChoiceAndDtypePerOpAndSize) {
  ChoiceTable t;
  const std::uint8_t ring_ll = ChoiceId("RING", "LL");
  const std::uint8_t bf16 = LookupDtype("ncclBfloat16").id;
  EXPECT_STREQ(t.NoteApiCall(1, 4096, bf16), "nccl");  // none seen yet
  EXPECT_EQ(t.NoteRan(1, 4096, ring_ll), bf16);
  EXPECT_STREQ(t.NoteApiCall(1, 4096, bf16), "nccl:algo=ring,proto=ll");
  EXPECT_STREQ(t.NoteApiCall(2, 4096, bf16), "nccl");               // another op of the same size
  EXPECT_STREQ(t.NoteApiCall(1, 8192, bf16), "nccl");               // another size
  EXPECT_EQ(t.NoteRan(1, 4096, ChoiceId("TREE", "SIMPLE")), bf16);  // NCCL changed its mind
  EXPECT_STREQ(t.NoteApiCall(1, 4096, bf16), "nccl:algo=tree,proto=simple");
  EXPECT_EQ(t.NoteRan(3, 1024, ring_ll), 0);  // a Coll whose CollApi was never seen
  // Beyond 16 TiB: not kept.
  const std::uint64_t huge = std::uint64_t{1} << 45;
  EXPECT_EQ(t.NoteRan(1, huge, ring_ll), 0);
  EXPECT_STREQ(t.NoteApiCall(1, huge, bf16), "nccl");
}

// Many sizes: a size seen last is always found; the table never grows.
TEST(ChoiceTable, ManySizesEvictButTheLatestIsKept) {
  ChoiceTable t;
  const std::uint8_t ring_ll128 = ChoiceId("RING", "LL128");
  for (std::uint64_t bytes = 1; bytes <= 4096; ++bytes) {
    t.NoteApiCall(1, bytes * 64, 1);
    ASSERT_EQ(t.NoteRan(1, bytes * 64, ring_ll128), 1) << bytes;
    ASSERT_STREQ(t.NoteApiCall(1, bytes * 64, 1), "nccl:algo=ring,proto=ll128") << bytes;
  }
  EXPECT_EQ(sizeof(t), ChoiceTable::kSlots * sizeof(std::uint64_t));
}

}  // namespace
}  // namespace ccltune::plugin::profiler

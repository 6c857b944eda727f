// NCCL's descriptor strings → ccltune's names, bytes and choice; the setting's parser; the
// event pool's bounds. No plugin .so needed.
#include "plugin/profiler/nccl_names.h"

#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "plugin/profiler/coll_event_pool.h"
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

}  // namespace
}  // namespace ccltune::plugin::profiler

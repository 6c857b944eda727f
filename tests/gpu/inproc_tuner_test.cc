// The in-process tuner plugin as NCCL sees it, without a GPU: dlopen the built .so, find
// ncclTunerPlugin_v5, hand its getCollInfo cost tables like NCCL's, and check that the
// forced entry becomes the only cheapest one, that entries NCCL ruled out stay ruled out,
// and that the backend's control functions reach the same loaded object.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "worker/nccl/tuner_control.h"

namespace ccltune::worker::nccl {
namespace {

// The v5 function table as NCCL reads it (first members; layout of tuner_v5.h).
struct TunerV5View {
  const char* name;
  int (*init)(void**, std::uint64_t, std::size_t, std::size_t, void*, void*, void*);
  int (*getCollInfo)(void*, int, std::size_t, int, float**, int, int, int, int*);
  int (*finalize)(void*);
};

class InprocTunerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* path = std::getenv("CCLTUNE_INPROC_TUNER");
    ASSERT_NE(path, nullptr) << "ctest sets CCLTUNE_INPROC_TUNER to the built plugin";
    auto t = TunerControl::Load(path);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    tuner_.emplace(std::move(t).value());
    void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);  // what NCCL does: same object
    ASSERT_NE(h, nullptr);
    plugin_ = static_cast<const TunerV5View*>(dlsym(h, "ncclTunerPlugin_v5"));
    ASSERT_NE(plugin_, nullptr);
    ASSERT_EQ(plugin_->init(&ctx_, 42, 4, 1, nullptr, nullptr, nullptr), 0);
    tuner_->Clear();
  }
  void TearDown() override {
    if (plugin_ != nullptr) plugin_->finalize(ctx_);
  }
  // Like NCCL on one NVLink node: only Tree and Ring offered, the rest -1.
  void ResetTable() {
    for (auto& row : table_)
      for (float& v : row) v = -1.0f;
    for (int a : {0, 1})
      for (int p = 0; p < 3; ++p) table_[a][p] = 10.0f + a * 3 + p;
  }
  int Call(int coll) {
    int channels = 0;
    plugin_->getCollInfo(ctx_, coll, 1 << 20, 1, reinterpret_cast<float**>(table_), 7, 3, 0,
                         &channels);
    return channels;
  }

  std::optional<TunerControl> tuner_;
  const TunerV5View* plugin_ = nullptr;
  void* ctx_ = nullptr;
  float table_[7][3];
};

TEST_F(InprocTunerTest, ForcedRingLl128IsTheOnlyCheapestEntry) {
  ResetTable();
  tuner_->Set(kCcltuneCollAllReduce, kCcltuneAlgoRing, kCcltuneProtoLL128, 0);
  Call(kCcltuneCollAllReduce);
  EXPECT_EQ(table_[kCcltuneAlgoRing][kCcltuneProtoLL128], 0.0f);
  for (int a = 0; a < 7; ++a) {
    for (int p = 0; p < 3; ++p) {
      if (a == kCcltuneAlgoRing && p == kCcltuneProtoLL128) continue;
      if (a <= 1)
        EXPECT_EQ(table_[a][p], 1e9f) << a << "," << p;
      else
        EXPECT_EQ(table_[a][p], -1.0f) << "ruled-out entry " << a << "," << p << " revived";
    }
  }
}

TEST_F(InprocTunerTest, OtherCollectivesAndClearedStateAreLeftAlone) {
  ResetTable();
  tuner_->Set(kCcltuneCollAllReduce, kCcltuneAlgoTree, kCcltuneProtoSimple, 0);
  Call(kCcltuneCollAllGather);
  EXPECT_EQ(table_[kCcltuneAlgoTree][kCcltuneProtoSimple], 12.0f);
  tuner_->Clear();
  Call(kCcltuneCollAllReduce);
  EXPECT_EQ(table_[kCcltuneAlgoTree][kCcltuneProtoSimple], 12.0f);
}

TEST_F(InprocTunerTest, UnofferedCombinationIsCountedNotForced) {
  ResetTable();
  table_[kCcltuneAlgoTree][kCcltuneProtoLL] = -1.0f;
  const CcltuneTunerStats before = tuner_->Stats();
  tuner_->Set(kCcltuneCollAllReduce, kCcltuneAlgoTree, kCcltuneProtoLL, 0);
  Call(kCcltuneCollAllReduce);
  const CcltuneTunerStats after = tuner_->Stats();
  EXPECT_EQ(after.unavailable, before.unavailable + 1);
  EXPECT_EQ(after.forced, before.forced);
  EXPECT_EQ(table_[kCcltuneAlgoRing][kCcltuneProtoSimple], 15.0f);  // untouched
  EXPECT_EQ(after.offered_mask[kCcltuneCollAllReduce] & 1u, 0u);    // tree/ll not offered
}

TEST_F(InprocTunerTest, ChannelsAreForcedWhenAsked) {
  ResetTable();
  tuner_->Set(kCcltuneCollReduceScatter, kCcltuneAlgoRing, kCcltuneProtoSimple, 2);
  EXPECT_EQ(Call(kCcltuneCollReduceScatter), 2);
}

}  // namespace
}  // namespace ccltune::worker::nccl

// The runtime's failure watch (issue 36) with the kernels' timed-out words played by a plain
// array: what the message names, that the thread finds a failure without any host call (a
// CUDA graph replay makes none), prints it once, and stops at once when destroyed.
#include "runtime/failure_watch.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <thread>

namespace ccltune::runtime {
namespace {

using std::chrono::milliseconds;

const FailureContext kContext{"0x5eed", 1, 4, milliseconds(3000)};

// Words laid out as the kernels write them: [0] timed out, [1 + r] rank r missing.
struct FakeWords {
  std::array<std::atomic<int>, 9> w{};
  FailureWatch::Probe Probe() {
    return [this](std::vector<int>* missing) {
      if (w[0].load() == 0) return false;
      for (int r = 0; r < 4; ++r) {
        if (w[1 + r].load() != 0) missing->push_back(r);
      }
      return true;
    };
  }
};

TEST(FailureWatch, MessageNamesCcltuneTheCommunicatorTheRanksAndTheTimeout) {
  const std::string m = FailureMessage(kContext, {0, 3});
  EXPECT_EQ(m.rfind("ccltune: communicator 0x5eed (rank 1 of 4): rank(s) 0, 3 did not arrive "
                    "within 3000 ms",
                    0),
            0u)
      << m;
  EXPECT_NE(m.find("CCLTUNE_TIMEOUT_MS"), std::string::npos) << m;
  EXPECT_NE(m.find("device-side trap"), std::string::npos) << m;
  EXPECT_NE(m.find("abort the process group"), std::string::npos) << m;
  EXPECT_NE(FailureMessage(kContext, {}).find("a peer (rank not recorded) did not arrive"),
            std::string::npos);
}

TEST(FailureWatch, TheThreadFindsAFailureWithoutAHostCallAndPrintsItOnce) {
  FakeWords words;
  ::testing::internal::CaptureStderr();
  {
    FailureWatch watch(words.Probe(), kContext, milliseconds(5));
    std::this_thread::sleep_for(milliseconds(30));
    EXPECT_FALSE(watch.failure()->failed());
    EXPECT_EQ(watch.Check(), "");
    words.w[1 + 2] = 1;
    words.w[0] = 1;
    // Nothing calls Check() now: the thread alone must see it (generous bound: no hang).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!watch.failure()->failed() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(1));
    }
    ASSERT_TRUE(watch.failure()->failed());
    EXPECT_EQ(watch.failure()->message(), FailureMessage(kContext, {2}));
    EXPECT_EQ(watch.Check(), FailureMessage(kContext, {2}));
    words.w[1 + 3] = 1;  // noted later: the first message stays
    EXPECT_EQ(watch.Check(), FailureMessage(kContext, {2}));
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, FailureMessage(kContext, {2}) + "\n");
}

TEST(FailureWatch, AHostCallSeesItBeforeTheThreadDoes) {
  FakeWords words;
  ::testing::internal::CaptureStderr();
  {
    FailureWatch watch(words.Probe(), kContext, std::chrono::hours(1));
    words.w[0] = 1;
    EXPECT_EQ(watch.Check(), FailureMessage(kContext, {}));
    EXPECT_TRUE(watch.failure()->failed());
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), FailureMessage(kContext, {}) + "\n");
}

TEST(FailureWatch, DestructionStopsTheThreadAtOnce) {
  FakeWords words;
  const auto start = std::chrono::steady_clock::now();
  { FailureWatch watch(words.Probe(), kContext, std::chrono::hours(1)); }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// A communicator destroyed (or aborted) before the thread's next look still says why.
TEST(FailureWatch, DestructionLooksOnceMore) {
  FakeWords words;
  ::testing::internal::CaptureStderr();
  {
    FailureWatch watch(words.Probe(), kContext, std::chrono::hours(1));
    words.w[1 + 0] = 1;
    words.w[0] = 1;
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), FailureMessage(kContext, {0}) + "\n");
}

TEST(FailureWatch, TheFailureOutlivesTheWatch) {
  FakeWords words;
  std::shared_ptr<const CommFailure> kept;
  ::testing::internal::CaptureStderr();
  {
    FailureWatch watch(words.Probe(), kContext, std::chrono::hours(1));
    kept = watch.failure();
    words.w[0] = 1;
    (void)watch.Check();
  }
  (void)::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(kept->failed());
  EXPECT_EQ(kept->message(), FailureMessage(kContext, {}));
}

TEST(CommFailure, IsSetOnce) {
  CommFailure f;
  EXPECT_FALSE(f.failed());
  EXPECT_EQ(f.message(), "");
  EXPECT_TRUE(f.Set("first"));
  EXPECT_FALSE(f.Set("second"));
  EXPECT_TRUE(f.failed());
  EXPECT_EQ(f.message(), "first");
}

}  // namespace
}  // namespace ccltune::runtime

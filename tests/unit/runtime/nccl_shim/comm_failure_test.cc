// libccltune-nccl's answers for a communicator whose context's kernels lost a peer (issue
// 36), without a GPU: a tracked communicator given a failure as a context's watch gives it
// (runtime::FailureWatch over words played by a plain array). Before the failure the real
// NCCL answers (the shim says nothing); after it, ncclRemoteError for the async query and for
// every collective, and the runtime's message from ncclGetLastError for that communicator
// and, once reported, for NULL (PyTorch asks so). Forwarding of both functions to the real
// NCCL with the caller's arguments is nccl_shim_fake's every-function check.
#include "runtime/nccl_shim/comm_failure.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>

#include "runtime/failure_watch.h"

namespace ccltune::shim {
namespace {

ncclComm_t FakeComm(std::uintptr_t v) { return reinterpret_cast<ncclComm_t>(v); }

TEST(CommFailure, ATrackedCommunicatorReportsRemoteErrorOnlyOnceItsContextFailed) {
  const ncclComm_t comm = FakeComm(0x1000), other = FakeComm(0x2000);
  CommRegistry::Get().Add(comm, true);
  CommRegistry::Get().Add(other, true);
  std::shared_ptr<CommEntry> e = CommRegistry::Get().Find(comm);
  ASSERT_TRUE(e);
  ncclResult_t err = ncclInProgress;
  // No context yet: the real NCCL answers.
  EXPECT_FALSE(AsyncErrorOf(comm, &err));
  EXPECT_EQ(err, ncclInProgress);
  EXPECT_EQ(FailedResult(*e), ncclSuccess);
  EXPECT_EQ(LastFailureText(comm), nullptr);

  std::atomic<int> timed_out{0};
  const runtime::FailureContext ctx{"0x1000", 0, 2, std::chrono::milliseconds(3000)};
  runtime::FailureWatch watch(
      [&](std::vector<int>* missing) {
        if (timed_out.load() == 0) return false;
        missing->push_back(1);
        return true;
      },
      ctx, std::chrono::hours(1));
  e->SetFailure(watch.failure());
  // A context that has not failed: still NCCL's answers.
  EXPECT_FALSE(AsyncErrorOf(comm, &err));
  EXPECT_EQ(FailedResult(*e), ncclSuccess);
  EXPECT_EQ(LastFailureText(nullptr), nullptr);

  timed_out = 1;
  ::testing::internal::CaptureStderr();
  const std::string message = watch.Check();
  (void)::testing::internal::GetCapturedStderr();
  ASSERT_EQ(message, runtime::FailureMessage(ctx, {1}));
  EXPECT_TRUE(AsyncErrorOf(comm, &err));
  EXPECT_EQ(err, ncclRemoteError);
  EXPECT_EQ(FailedResult(*e), ncclRemoteError);
  ASSERT_NE(LastFailureText(comm), nullptr);
  EXPECT_EQ(std::string(LastFailureText(comm)), message);
  EXPECT_EQ(std::string(LastFailureText(nullptr)), message);
  // Another communicator, or one never tracked, is NCCL's to answer.
  err = ncclInProgress;
  EXPECT_FALSE(AsyncErrorOf(other, &err));
  EXPECT_EQ(err, ncclInProgress);
  EXPECT_EQ(LastFailureText(other), nullptr);
  EXPECT_FALSE(AsyncErrorOf(FakeComm(0x3000), &err));
  EXPECT_FALSE(AsyncErrorOf(comm, nullptr));  // NCCL's own check of the argument then

  // The failure outlives the context (destroyed with its watch) while the entry lives.
  std::shared_ptr<CommEntry> removed = CommRegistry::Get().Remove(comm);
  EXPECT_EQ(FailedResult(*removed), ncclRemoteError);
  EXPECT_FALSE(AsyncErrorOf(comm, &err));  // no longer tracked: destroyed or aborted
  (void)CommRegistry::Get().Remove(other);
}

}  // namespace
}  // namespace ccltune::shim

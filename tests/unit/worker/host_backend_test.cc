// HostBackend as the bench runner uses it: the choice catalog, prepare/warm-up/timed
// round/verify, barrier and max-reduction, the test-hang choice with abort-and-continue
// (Timeout on every rank, Recover to a new epoch, then a correct collective), fingerprint.
#include <gtest/gtest.h>

#include <chrono>

#include "tests/unit/worker/host_test_util.h"

namespace ccltune::worker::host {
namespace {

using testing::HostRanks;
using testing::RunOnRanks;

std::vector<std::string> Names(const std::vector<ChoiceCandidate>& cands) {
  std::vector<std::string> out;
  for (const auto& c : cands) out.push_back(c.name.base);
  return out;
}

core::Problem MakeProblem(core::Op op, std::uint64_t bytes, core::Dtype d = core::Dtype::kFp32) {
  core::Problem p;
  p.op = op;
  p.dtype = d;
  p.redop = core::IsReducing(op) ? core::RedOp::kSum : core::RedOp::kNone;
  p.bytes = bytes;
  return p;
}

class HostBackendTest : public ::testing::Test {
 protected:
  void Start(int n, const HostBackendOptions& options = {}) {
    ranks_ = std::make_unique<HostRanks>(n);
    for (const auto& st : ranks_->Create(never_, options)) ASSERT_TRUE(st.ok()) << st.ToString();
  }
  HostBackend& B(int r) { return *ranks_->backends[r]; }
  NeverCancel never_;
  std::unique_ptr<HostRanks> ranks_;
};

TEST_F(HostBackendTest, CandidatesPutTheDefaultFirstAndHonourRequests) {
  Start(4);
  EXPECT_EQ(Names(B(0).Candidates(MakeProblem(core::Op::kAllReduce, 4096))),
            (std::vector<std::string>{"ring", "recursive-doubling", "direct", "rs+ag"}));
  EXPECT_EQ(Names(B(0).Candidates(MakeProblem(core::Op::kAllToAll, 4096))),
            (std::vector<std::string>{"ring", "pairwise", "direct"}));
  EXPECT_EQ(Names(B(0).Candidates(MakeProblem(core::Op::kBroadcast, 4096))),
            (std::vector<std::string>{"ring", "binomial", "direct"}));
  core::Problem p = MakeProblem(core::Op::kAllGather, 4096);
  p.choices = {"direct", "recursive-doubling"};
  const auto cands = B(0).Candidates(p);
  ASSERT_EQ(Names(cands), (std::vector<std::string>{"direct", "recursive-doubling"}));
  EXPECT_TRUE(cands[0].applicable());
  EXPECT_NE(cands[1].skip_reason.find("not a host choice for allGather (allowed: ring, direct)"),
            std::string::npos)
      << cands[1].skip_reason;
  // test-hang is not offered unless enabled.
  for (const auto& c : B(0).Candidates(MakeProblem(core::Op::kAllReduce, 4096))) {
    EXPECT_NE(c.name.base, "test-hang");
  }
}

TEST_F(HostBackendTest, TooSmallForTheWorldIsSkippedWithAReason) {
  Start(4);
  const core::Problem p = MakeProblem(core::Op::kAllGather, 8);  // 2 floats over 4 ranks
  for (const auto& c : B(0).Candidates(p)) {
    EXPECT_NE(c.skip_reason.find("too small for world size 4"), std::string::npos);
  }
  const auto prepared = B(0).Prepare(p, core::ChoiceName{"ring", {}}, {});
  EXPECT_EQ(prepared.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_NE(prepared.status().message().find("too small for world size 4"), std::string::npos);
  EXPECT_EQ(B(0).Prepare(MakeProblem(core::Op::kAllGather, 4096), core::ChoiceName{"nccl", {}}, {})
                .status()
                .code(),
            core::StatusCode::kInvalidArgument);
}

TEST_F(HostBackendTest, EveryChoiceWarmsUpTimesAndVerifies) {
  Start(3);
  std::vector<std::string> errors(3);
  RunOnRanks(3, [&](int r) {
    for (core::Op op : core::AllOps()) {
      for (core::Dtype d : {core::Dtype::kFp32, core::Dtype::kBf16, core::Dtype::kInt8}) {
        const core::Problem p = MakeProblem(op, 6000, d);
        for (const ChoiceCandidate& c : B(r).Candidates(p)) {
          auto prepared = B(r).Prepare(p, c.name, {});
          core::Status st = prepared.status();
          if (st.ok()) st = (*prepared)->Warmup(2, DeadlineIn(20));
          auto t = st.ok() ? (*prepared)->TimedRound(3, DeadlineIn(20)) : core::Result<double>(st);
          st = t.status();
          if (st.ok() && !(*t > 0)) st = core::Internal("non-positive time");
          if (st.ok()) st = (*prepared)->Verify(DeadlineIn(20));
          if (st.ok()) st = (*prepared)->Verify(DeadlineIn(20));  // fresh data again
          if (!st.ok())
            errors[r] +=
                std::string(core::OpName(op)) + "/" + c.name.base + ": " + st.ToString() + "\n";
        }
      }
    }
  });
  for (int r = 0; r < 3; ++r) EXPECT_TRUE(errors[r].empty()) << "rank " << r << ":\n" << errors[r];
}

TEST_F(HostBackendTest, BarrierAndAllReduceMax) {
  Start(4);
  std::vector<core::Status> st(4);
  std::vector<std::vector<double>> got(4);
  RunOnRanks(4, [&](int r) {
    st[r] = B(r).Barrier(DeadlineIn(10));
    if (!st[r].ok()) return;
    auto m = B(r).AllReduceMax({1.0 * r, -1.0 * r, r == 2 ? 9.5 : 0.25}, DeadlineIn(10));
    if (m.ok())
      got[r] = *m;
    else
      st[r] = m.status();
  });
  for (int r = 0; r < 4; ++r) {
    ASSERT_TRUE(st[r].ok()) << st[r].ToString();
    EXPECT_EQ(got[r], (std::vector<double>{3.0, 0.0, 9.5}));
  }
}

TEST_F(HostBackendTest, TestHangTimesOutEveryRankThenRecoverAndContinue) {
  HostBackendOptions options;
  options.enable_test_choices = true;
  options.test_hang_rank = 1;
  Start(3, options);
  const core::Problem p = MakeProblem(core::Op::kAllReduce, 4096);
  EXPECT_EQ(Names(B(0).Candidates(p)).back(), "test-hang");
  std::vector<core::Status> hang(3), after(3);
  std::vector<double> took(3);
  RunOnRanks(3, [&](int r) {
    auto prepared = B(r).Prepare(p, core::ChoiceName{"test-hang", {}}, {});
    const auto t0 = Clock::now();
    hang[r] = prepared.ok() ? (*prepared)->Warmup(1, DeadlineIn(0.5)) : prepared.status();
    took[r] = std::chrono::duration<double>(Clock::now() - t0).count();
    after[r] = B(r).Recover(1, DeadlineIn(10));
    if (!after[r].ok()) return;
    auto ring = B(r).Prepare(p, core::ChoiceName{"ring", {}}, {});
    after[r] = ring.ok() ? (*ring)->Verify(DeadlineIn(10)) : ring.status();
    if (after[r].ok()) after[r] = B(r).Barrier(DeadlineIn(10));
  });
  // The first rank past its deadline reports Timeout and drops the mesh; a rank still
  // waiting then learns it at once (Aborted) instead of waiting out its own deadline.
  int named_rank1 = 0;
  for (int r = 0; r < 3; ++r) {
    const bool timeout = hang[r].code() == core::StatusCode::kTimeout;
    EXPECT_TRUE(timeout || (r != 1 && hang[r].code() == core::StatusCode::kAborted))
        << hang[r].ToString();
    named_rank1 += hang[r].message().find("no data from rank 1") != std::string::npos;
    EXPECT_LT(took[r], 3.0);
    EXPECT_TRUE(after[r].ok()) << "rank " << r << ": " << after[r].ToString();
    EXPECT_EQ(B(r).epoch(), 1);
  }
  EXPECT_GE(named_rank1, 1) << hang[0].message() << " / " << hang[2].message();
  EXPECT_EQ(hang[1].code(), core::StatusCode::kTimeout);
  EXPECT_NE(hang[1].message().find("test-hang"), std::string::npos) << hang[1].message();
}

TEST_F(HostBackendTest, FingerprintDescribesTheHostMesh) {
  Start(2);
  const core::FingerprintInput fp = B(0).FingerprintInfo();
  EXPECT_EQ(fp.backend, "host");
  EXPECT_EQ(fp.gpu_model, "cpu");
  EXPECT_EQ(fp.nodes, 1);
  EXPECT_EQ(fp.gpus_per_node, 2);
  EXPECT_EQ(fp.p2p_summary, "tcp");
  EXPECT_EQ(B(0).name(), "host");
  EXPECT_EQ(B(1).rank(), 1);
  EXPECT_EQ(B(1).world_size(), 2);
}

}  // namespace
}  // namespace ccltune::worker::host

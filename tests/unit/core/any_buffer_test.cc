// The any-buffer rule (core/apply/any_buffer.h, issue 43): which measured choices a program's
// own tensors can run, the same answer for the worker (its search and records) and the
// runtime. Every base of both backends has an exact expectation here, so a base added to the
// catalog without a decision fails this test.
#include "core/apply/any_buffer.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "core/apply/staged.h"
#include "core/plan/choice.h"

namespace ccltune::apply {
namespace {

using core::Op;

const std::string kPeers =
    "reads or writes the peers' buffers: runs only on buffers from ccltuneMemAlloc";
const std::string kFused =
    "a fused kernel reads the peers' inputs or writes their out and residual: runs only when "
    "input, out and residual come from ccltuneMemAlloc";
const std::string kReg = "nccl-reg needs the application's buffers registered with NCCL";
const std::string kSymm = "nccl-symm needs the application's buffers in an NCCL symmetric window";

struct Case {
  const char* name;
  Op op;
  std::string why;  // empty: runs on any buffer
};

// Per base of the NCCL backend, its names and what each needs.
const std::map<std::string, std::vector<Case>>& NcclCases() {
  static const std::map<std::string, std::vector<Case>> cases = {
      {"nccl",
       {{"nccl", Op::kAllReduce, ""},
        {"nccl:algo=ring,proto=ll", Op::kAllReduce, ""},
        {"nccl:algo=tree,proto=simple", Op::kAllReduce, ""},
        {"nccl:ctas=8", Op::kAllGather, ""},
        {"nccl:p2pchunk=524288", Op::kAllToAll, ""}}},
      {"nccl-reg", {{"nccl-reg", Op::kAllReduce, kReg}}},
      {"nccl-symm", {{"nccl-symm", Op::kReduceScatter, kSymm}}},
      {"rs+ag", {{"rs+ag", Op::kAllReduce, ""}}},
      {"oneshot",
       {{"oneshot", Op::kAllReduce, kPeers},  // mode=pull is the default
        {"oneshot:mode=pull", Op::kAllReduce, kPeers},
        {"oneshot:blocks=8,mode=push,threads=512", Op::kAllReduce, ""},
        {"oneshot:mode=ll", Op::kAllReduce, ""},
        {"oneshot:mode=pull,staged=1", Op::kAllReduce, ""}}},
      {"twoshot",
       {{"twoshot:mode=pull", Op::kAllReduce, kPeers},
        {"twoshot:mode=push", Op::kAllReduce, kPeers},  // its all-gather writes the peers' out
        {"twoshot:mode=pull", Op::kReduceScatter, kPeers},
        {"twoshot:mode=push", Op::kReduceScatter, ""},
        {"twoshot:mode=pull,staged=1", Op::kAllReduce, ""},
        {"twoshot:mode=pull,staged=1", Op::kReduceScatter, ""}}},
      {"p2p",
       {{"p2p:mode=push", Op::kAllGather, kPeers},
        {"p2p", Op::kAllGather, kPeers},
        {"p2p:mode=push,staged=1", Op::kAllGather, ""}}},
      {"ce", {{"ce:mode=push", Op::kAllGather, kPeers}, {"ce:mode=pull", Op::kAllGather, kPeers}}},
      {"oneshot-fused",
       {{"oneshot-fused:mode=pull", Op::kAllReduce, kFused},
        {"oneshot-fused:mode=ll", Op::kAllReduce, kFused}}},
      {"twoshot-fused", {{"twoshot-fused:blocks=16,threads=512", Op::kAllReduce, kFused}}},
      {"hier", {{"hier:blocks=16,threads=512", Op::kAllReduce, ""}}},
      {"nccl-net", {{"nccl-net:socketThreads=4,socksPerThread=2", Op::kAllReduce, ""}}},
  };
  return cases;
}

class AnyBufferRule : public ::testing::Test {
 protected:
  // test-pooled and test-fast are names only with the test choices offered.
  void SetUp() override { ::setenv("CCLTUNE_ENABLE_TEST_CHOICES", "1", 1); }
  void TearDown() override { ::unsetenv("CCLTUNE_ENABLE_TEST_CHOICES"); }
};

TEST_F(AnyBufferRule, EveryNcclBaseHasItsExactAnswer) {
  std::set<std::string> covered;
  for (const auto& [base, cases] : NcclCases()) {
    covered.insert(base);
    for (const Case& c : cases) {
      auto name = core::ParseChoice(c.name, "nccl");
      ASSERT_TRUE(name.ok()) << c.name << ": " << name.status().ToString();
      EXPECT_EQ(WhyNotAnyBuffer(*name, c.op, "nccl"), c.why) << c.name << " " << OpName(c.op);
      auto spec = SpecFromChoice(*name);
      ASSERT_TRUE(spec.ok()) << c.name;
      EXPECT_EQ(WhyNotAnyBuffer(*spec, c.op), c.why) << c.name;  // by spec: the same
    }
  }
  for (const auto& base : core::ChoiceBases("nccl"))
    EXPECT_TRUE(covered.contains(base)) << base << " has no expectation here: decide it";
}

// Direct mode runs exactly the pull one-shot and two-shot all-reduces on registered tensors
// in graphs: every other choice that needs shared buffers stays pooled only.
TEST_F(AnyBufferRule, ReachIsAnyRegisteredForPullAllReducesOrPooled) {
  const std::set<std::pair<std::string, Op>> registered = {{"oneshot", Op::kAllReduce},
                                                           {"oneshot:mode=pull", Op::kAllReduce},
                                                           {"twoshot:mode=pull", Op::kAllReduce}};
  for (const auto& [base, cases] : NcclCases()) {
    for (const Case& c : cases) {
      auto name = core::ParseChoice(c.name, "nccl");
      ASSERT_TRUE(name.ok()) << c.name;
      const core::BufferReach want = !c.why.empty() && registered.contains({c.name, c.op})
                                         ? core::BufferReach::kRegistered
                                     : c.why.empty() ? core::BufferReach::kAny
                                                     : core::BufferReach::kPooled;
      EXPECT_EQ(ReachOf(*name, c.op, "nccl"), want) << c.name << " " << OpName(c.op);
      EXPECT_EQ(ReachOf(*SpecFromChoice(*name), c.op), want) << c.name;
    }
  }
  EXPECT_EQ(ReachOf(core::ChoiceName{kTestPooledChoice, {}}, Op::kAllReduce, "host"),
            core::BufferReach::kPooled);
  EXPECT_EQ(ReachOf(core::ChoiceName{"ring", {}}, Op::kAllReduce, "host"), core::BufferReach::kAny);
}

// With an epilogue every unfused name is the all-reduce then the separate kernel: the rule
// does not depend on it, and the test choices follow their composition.
TEST_F(AnyBufferRule, TestChoicesOfTheNcclBackendFollowWhatTheyAre) {
  EXPECT_EQ(WhyNotAnyBuffer(core::ChoiceName{"test-hang", {}}, Op::kAllReduce, "nccl"), "");
  EXPECT_EQ(WhyNotAnyBuffer(core::ChoiceName{"test-absent", {}}, Op::kAllReduce, "nccl"), kPeers);
}

TEST_F(AnyBufferRule, HostAlgorithmsRunOnTheCallersBuffersButTestPooled) {
  for (const auto& base : core::ChoiceBases("host"))
    EXPECT_EQ(WhyNotAnyBuffer(core::ChoiceName{base, {}}, Op::kAllReduce, "host"), "") << base;
  for (const char* base : {"test-fast", "test-slow", "test-hang"})
    EXPECT_EQ(WhyNotAnyBuffer(core::ChoiceName{base, {}}, Op::kAllReduce, "host"), "") << base;
  EXPECT_EQ(WhyNotAnyBuffer(core::ChoiceName{kTestPooledChoice, {}}, Op::kAllReduce, "host"),
            "test-pooled stands for a kernel that runs only on pooled buffers");
}

// Issue 43: of the any-buffer choices, an eager program's own buffers may run every one but
// NCCL on a communicator of the runtime's own (ctas=N, with or without a forced algorithm);
// the host backend's algorithms all.
TEST_F(AnyBufferRule, EagerOwnBuffersRunNoCommunicatorWithPinnedCtas) {
  for (const auto& [base, cases] : NcclCases()) {
    for (const Case& c : cases) {
      const core::Result<core::ChoiceName> name = core::ParseChoice(c.name, "nccl");
      ASSERT_TRUE(name.ok()) << c.name;
      const std::string why = WhyNotEager(*name, "nccl");
      if (std::string(c.name).find("ctas=") == std::string::npos) {
        EXPECT_EQ(why, "") << c.name;
      } else {
        EXPECT_EQ(why,
                  "NCCL on a communicator of 8 CTAs is not run on an eager program's own buffers "
                  "(timed alone, it ran slower than NCCL's own beside the program's kernels)")
            << c.name;
      }
    }
  }
  for (const char* name : {"nccl:algo=ring,ctas=32,proto=simple", "nccl:ctas=2"}) {
    const core::Result<core::ChoiceName> parsed = core::ParseChoice(name, "nccl");
    ASSERT_TRUE(parsed.ok()) << name;
    EXPECT_NE(WhyNotEager(*parsed, "nccl"), "") << name;
  }
  for (const auto& base : core::ChoiceBases("host"))
    EXPECT_EQ(WhyNotEager(core::ChoiceName{base, {}}, "host"), "") << base;
  EXPECT_NE(WhyNotEager(core::ChoiceName{"nccl", {{"ctas", "3"}}}, "nccl").find("ctas '3'"),
            std::string::npos);
}

// What the tune counts as serving a program's own buffers: any-buffer reach, and in eager
// tunes no communicator of the runtime's own.
TEST_F(AnyBufferRule, OwnBuffersAreAnyBufferReachAndEagerSafeWhereEager) {
  const auto serves = [](const char* name, bool eager) {
    const core::Result<core::ChoiceName> parsed = core::ParseChoice(name, "nccl");
    EXPECT_TRUE(parsed.ok()) << name;
    return parsed.ok() && ServesOwnBuffers(*parsed, Op::kAllReduce, "nccl", eager);
  };
  for (bool eager : {false, true}) {
    EXPECT_TRUE(serves("nccl", eager));
    EXPECT_TRUE(serves("oneshot:mode=push", eager));
    EXPECT_FALSE(serves("oneshot:mode=pull", eager));
    EXPECT_FALSE(serves("nccl-symm", eager));
    EXPECT_TRUE(ServesOwnBuffers(core::ChoiceName{"ring", {}}, Op::kAllReduce, "host", eager));
  }
  EXPECT_TRUE(serves("nccl:ctas=32", false));
  EXPECT_FALSE(serves("nccl:ctas=32", true));
}

ChoiceSpec Spec(const std::string& name) {
  core::Result<core::ChoiceName> parsed = core::ParseChoice(name, "nccl");
  EXPECT_TRUE(parsed.ok()) << name << ": " << parsed.status().message();
  core::Result<ChoiceSpec> spec = SpecFromChoice(*parsed);
  EXPECT_TRUE(spec.ok()) << name << ": " << spec.status().message();
  return spec.ok() ? *spec : ChoiceSpec{};
}

std::string ParseError(const std::string& name) {
  core::Result<core::ChoiceName> parsed = core::ParseChoice(name, "nccl");
  if (!parsed.ok()) return parsed.status().message();
  core::Result<ChoiceSpec> spec = SpecFromChoice(*parsed);
  return spec.ok() ? "" : spec.status().message();
}

// staged=1 (issue 43): what is copied, exactly, per kernel and op, and which kernels copy
// inside their own launch (every pull kernel; the all-reduces through direct mode's kernels,
// with a slot).
TEST_F(AnyBufferRule, StagedCopiesTheInputAndTheOutputOnlyWhereThePeersShareIt) {
  struct Want {
    const char* name;
    Op op;
    bool in, out, in_kernel;
  } const wants[] = {
      {"oneshot:mode=pull,staged=1", Op::kAllReduce, true, false, true},
      {"twoshot:mode=pull,staged=1", Op::kAllReduce, true, true, true},
      {"twoshot:mode=push,staged=1", Op::kAllReduce, true, true, false},
      {"twoshot:mode=pull,staged=1", Op::kReduceScatter, true, false, true},
      {"p2p:mode=pull,staged=1", Op::kAllGather, true, false, true},
      {"p2p:mode=push,staged=1", Op::kAllGather, true, true, false},
      {"oneshot:mode=pull", Op::kAllReduce, false, false, false},
      {"nccl", Op::kAllReduce, false, false, false},
  };
  for (const Want& w : wants) {
    const StagedCopies c = StagedCopiesOf(Spec(w.name), w.op);
    EXPECT_EQ(c.in, w.in) << w.name;
    EXPECT_EQ(c.out, w.out) << w.name;
    EXPECT_EQ(c.in_kernel, w.in_kernel) << w.name;
    EXPECT_EQ(c.slot, w.in_kernel && w.op == Op::kAllReduce) << w.name;
  }
}

TEST_F(AnyBufferRule, StagedIsOnlyForKernelsThatNeedSharedBuffers) {
  EXPECT_EQ(ParseError("oneshot:mode=ll,staged=1"),
            "oneshot:mode=ll,staged=1: staged does not apply to mode=ll (LL runs on any buffer)");
  EXPECT_NE(ParseError("oneshot:staged=2").find("staged"), std::string::npos);
  EXPECT_NE(ParseError("ce:mode=pull,staged=1"), "");
  EXPECT_NE(ParseError("oneshot-fused:mode=pull,staged=1"), "");
  core::Problem p;
  p.op = Op::kAllReduce;
  p.dtype = core::Dtype::kBf16;
  p.bytes = 1 << 20;
  EXPECT_EQ(PeerSkipReason(Spec("oneshot:mode=push,staged=1"), p, 4),
            "staged: this kernel runs on any buffer unstaged (only this rank's buffers and the "
            "peers' staging)");
  EXPECT_EQ(PeerSkipReason(Spec("oneshot:mode=pull,staged=1"), p, 4), "");
  EXPECT_EQ(Spec("twoshot:blocks=64,mode=pull,staged=1,threads=256,unroll=2").unroll, 2);
}

TEST_F(AnyBufferRule, ANameThatDoesNotReadRunsNowhere) {
  EXPECT_NE(WhyNotAnyBuffer(core::ChoiceName{"oneshot", {}}, Op::kAllReduce, "host")
                .find("is not a known choice for backend host"),
            std::string::npos);
  EXPECT_NE(WhyNotAnyBuffer(core::ChoiceName{"ring", {}}, Op::kAllReduce, "nccl")
                .find("is not a known choice for backend nccl"),
            std::string::npos);
  EXPECT_NE(
      WhyNotAnyBuffer(core::ChoiceName{"oneshot", {{"mode", "fast"}}}, Op::kAllReduce, "nccl"), "");
  ::unsetenv("CCLTUNE_ENABLE_TEST_CHOICES");
  EXPECT_NE(WhyNotAnyBuffer(core::ChoiceName{kTestPooledChoice, {}}, Op::kAllReduce, "host")
                .find("is not a known choice"),
            std::string::npos);
}

}  // namespace
}  // namespace ccltune::apply

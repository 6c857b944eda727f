// All-reduce + epilogue in the runtime's dispatch table (issue 16): epilogue records form
// slices of their own per (dtype, kind, hidden), apart from the plain all-reduce's; the
// nearest tuned tokens x hidden size picks the entry; fused winners run only on pooled
// buffers (plain ones get the fastest unfused choice); the digest the ranks compare covers
// the epilogue slices. And the epilogue entry points' argument checks, which need no GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runtime/dispatch_table.h"
#include "runtime/epilogue_call.h"
#include "tests/unit/runtime/record_builder.h"

namespace ccltune::runtime {
namespace {

using core::Dtype;
using core::Op;
using core::RedOp;

constexpr const char* kLL = "oneshot:blocks=64,threads=256,mode=ll";
constexpr const char* kFusedLL = "oneshot-fused:blocks=32,mode=ll,threads=256";
constexpr const char* kFusedPull = "oneshot-fused:blocks=64,mode=pull,threads=256";
constexpr const char* kFusedTwoShot = "twoshot-fused:blocks=128,mode=pull,threads=256";

Capabilities PeersOn(int world) { return Capabilities{world, ""}; }

// hidden 4096 bf16: a token is 8 KiB. Fused LL wins 1 token, fused pull 32, two-shot 512.
std::vector<apply::WinnerRecord> EpilogueSweep() {
  const core::Epilogue e = RmsNorm(4096);
  return {
      MakeEpilogueRecord(e, 1, 4, {{"nccl", 14.0}, {kLL, 9.0}, {kFusedLL, 5.0}}),
      MakeEpilogueRecord(e, 32, 4, {{"nccl", 20.0}, {kLL, 16.0}, {kFusedPull, 9.0}}),
      MakeEpilogueRecord(e, 512, 4,
                         {{"nccl", 60.0}, {"nccl:ctas=16", 50.0}, {kFusedTwoShot, 30.0}}),
  };
}

// Plain all-reduces at the same byte sizes, with other winners.
std::vector<apply::WinnerRecord> PlainAtSameSizes() {
  return {MakeRecord(Op::kAllReduce, 8192, 4, {{"nccl", 9.0}, {kLL, 3.0}}),
          MakeRecord(Op::kAllReduce, 32 * 8192, 4, {{"nccl", 12.0}, {"rs+ag", 8.0}}),
          MakeRecord(Op::kAllReduce, 512 * 8192, 4, {{"nccl", 40.0}})};
}

std::vector<apply::WinnerRecord> Both() {
  std::vector<apply::WinnerRecord> all = PlainAtSameSizes();
  for (auto& r : EpilogueSweep()) all.push_back(r);
  return all;
}

std::uint64_t BytesOf(std::uint64_t tokens) { return tokens * 4096 * 2; }

const AppliedRun& Rms(const DispatchTable& t, std::uint64_t tokens, BufferClass cls,
                      int hidden = 4096) {
  return t.Choose(Op::kAllReduce, Dtype::kBf16, RedOp::kSum, BytesOf(tokens), cls, RmsNorm(hidden));
}

TEST(EpilogueDispatch, SlicesAreSeparateFromThePlainAllReduce) {
  const DispatchTable t = DispatchTable::Build(Both(), PeersOn(4));
  EXPECT_EQ(t.size(), 6u);
  // The same byte sizes: the plain slice keeps its own winners ...
  EXPECT_EQ(t.Choose(Op::kAllReduce, Dtype::kBf16, RedOp::kSum, 8192, BufferClass::kPooled).name,
            kLL);
  EXPECT_EQ(
      t.Choose(Op::kAllReduce, Dtype::kBf16, RedOp::kSum, 32 * 8192, BufferClass::kPooled).name,
      "rs+ag");
  // ... and the epilogue slice its own.
  EXPECT_EQ(Rms(t, 1, BufferClass::kPooled).name, kFusedLL);
  EXPECT_EQ(Rms(t, 32, BufferClass::kPooled).name, kFusedPull);
  EXPECT_EQ(Rms(t, 512, BufferClass::kPooled).name, kFusedTwoShot);
  // Another hidden, another kind or dtype: no slice, so NCCL + the separate kernel.
  EXPECT_EQ(t.Lookup(Op::kAllReduce, Dtype::kBf16, RedOp::kSum, BytesOf(1), RmsNorm(8192)),
            nullptr);
  core::Epilogue bias = RmsNorm(4096);
  bias.kind = core::EpilogueKind::kBias;
  EXPECT_EQ(t.Lookup(Op::kAllReduce, Dtype::kBf16, RedOp::kSum, BytesOf(1), bias), nullptr);
  EXPECT_EQ(t.Lookup(Op::kAllReduce, Dtype::kFp16, RedOp::kSum, BytesOf(1), RmsNorm(4096)),
            nullptr);
  EXPECT_EQ(Rms(t, 1, BufferClass::kPooled, 8192).name, "nccl");
  // eps is not keyed: it changes no timing.
  core::Epilogue other_eps = RmsNorm(4096);
  other_eps.eps = 1e-6;
  EXPECT_NE(t.Lookup(Op::kAllReduce, Dtype::kBf16, RedOp::kSum, BytesOf(1), other_eps), nullptr);
}

TEST(EpilogueDispatch, EpilogueRecordsAloneLeaveThePlainAllReduceToNccl) {
  const DispatchTable t = DispatchTable::Build(EpilogueSweep(), PeersOn(4));
  EXPECT_EQ(t.Lookup(Op::kAllReduce, Dtype::kBf16, RedOp::kSum, 8192), nullptr);
  EXPECT_EQ(t.Choose(Op::kAllReduce, Dtype::kBf16, RedOp::kSum, 8192, BufferClass::kPooled).name,
            "nccl");
}

TEST(EpilogueDispatch, NearestTunedTokensInLog2) {
  const DispatchTable t = DispatchTable::Build(EpilogueSweep(), PeersOn(4));
  const auto tuned = [&](std::uint64_t tokens) {
    const TableEntry* e =
        t.Lookup(Op::kAllReduce, Dtype::kBf16, RedOp::kSum, BytesOf(tokens), RmsNorm(4096));
    return e == nullptr ? 0 : e->bytes / BytesOf(1);
  };
  EXPECT_EQ(tuned(1), 1u);
  EXPECT_EQ(tuned(4), 1u);     // 2 doublings from 1, 3 from 32
  EXPECT_EQ(tuned(8), 32u);    // 3 from 1, 2 from 32
  EXPECT_EQ(tuned(100), 32u);  // 1.6 from 32, 2.4 from 512
  EXPECT_EQ(tuned(8192), 512u);
}

TEST(EpilogueDispatch, FusedWinnersRunOnlyOnPooledBuffers) {
  const DispatchTable t = DispatchTable::Build(EpilogueSweep(), PeersOn(4));
  // Plain buffers: the fastest unfused choice that needs nothing shared.
  const AppliedRun& one = Rms(t, 1, BufferClass::kPlain);
  EXPECT_EQ(one.name, kLL);
  EXPECT_FALSE(one.spec.fused);
  EXPECT_NE(one.reason.find("fused kernel"), std::string::npos) << one.reason;
  EXPECT_EQ(Rms(t, 32, BufferClass::kPlain).name, kLL);  // 16 < 20 * 0.97
  EXPECT_EQ(Rms(t, 512, BufferClass::kPlain).name, "nccl:ctas=16");
  EXPECT_TRUE(Rms(t, 512, BufferClass::kPooled).spec.fused);
  EXPECT_EQ(t.CtasNeeded(), std::set<int>{16});  // epilogue slices' communicators too
  // Without peer memory nothing fused or peer runs anywhere.
  const DispatchTable off = DispatchTable::Build(EpilogueSweep(), Capabilities{4, "one node"});
  EXPECT_EQ(Rms(off, 1, BufferClass::kPooled).name, "nccl");
  EXPECT_EQ(Rms(off, 512, BufferClass::kPooled).name, "nccl:ctas=16");
}

TEST(EpilogueDispatch, DigestAndDescriptionCoverEpilogueSlices) {
  const DispatchTable plain = DispatchTable::Build(PlainAtSameSizes(), PeersOn(4));
  const DispatchTable both = DispatchTable::Build(Both(), PeersOn(4));
  EXPECT_NE(plain.Digest(), both.Digest());
  EXPECT_EQ(both.Digest(), DispatchTable::Build(Both(), PeersOn(4)).Digest());
  std::vector<apply::WinnerRecord> wider = Both();
  wider.push_back(MakeEpilogueRecord(RmsNorm(8192), 1, 4, {{"nccl", 15.0}, {kLL, 9.0}}));
  EXPECT_NE(both.Digest(), DispatchTable::Build(wider, PeersOn(4)).Digest());
  EXPECT_NE(both.Describe().find("allReduce bf16/sum+residualRmsNorm,hidden=4096: 3 sizes"),
            std::string::npos)
      << both.Describe();
}

TEST(EpilogueDispatch, RecordsOutsideTheEpilogueKernelsAreDropped) {
  std::vector<apply::WinnerRecord> odd;
  auto r = EpilogueSweep()[0];
  r.redop = RedOp::kMax;
  odd.push_back(r);
  r = EpilogueSweep()[0];
  r.dtype = Dtype::kInt32;
  odd.push_back(r);
  r = EpilogueSweep()[0];
  r.epilogue.hidden = 100;  // not a multiple of 8
  odd.push_back(r);
  r = EpilogueSweep()[0];
  r.bytes += 2;  // no whole number of rows
  odd.push_back(r);
  EXPECT_EQ(DispatchTable::Build(odd, PeersOn(4)).size(), 0u);
}

TEST(EpilogueDispatch, FusedChoicesNeedAnEpilogueAndAnExactCallTheyCanRun) {
  core::Problem plain;
  plain.op = Op::kAllReduce;
  plain.dtype = Dtype::kBf16;
  plain.bytes = 8192;
  const auto spec = [](const std::string& n) { return ParseRuntimeChoice(n).value(); };
  EXPECT_NE(WhyNotRunnable(spec(kFusedLL), plain, PeersOn(4), BufferClass::kPooled), "");
  core::Problem with = plain;
  with.epilogue = RmsNorm(4096);
  EXPECT_EQ(WhyNotRunnable(spec(kFusedLL), with, PeersOn(4), BufferClass::kPooled), "");
  EXPECT_NE(WhyNotRunnable(spec(kFusedLL), with, PeersOn(4), BufferClass::kPlain), "");
  // A block keeps a row in registers: 8192 bf16 are 1024 vectors, more than 128 x 4.
  with.epilogue = RmsNorm(8192);
  with.bytes = 16384;
  EXPECT_NE(WhyNotRunnable(spec("oneshot-fused:blocks=8,mode=pull,threads=128"), with, PeersOn(4),
                           BufferClass::kPooled),
            "");
  // out aliasing input: one-shot pull would overwrite what the peers still read.
  const CallShape in_place{Op::kAllReduce, Dtype::kBf16, 4096, 4, true};
  EXPECT_EQ(WhyNotForCall(spec(kFusedPull), in_place, BufferClass::kPooled),
            "one-shot pull cannot run in place");
  EXPECT_EQ(WhyNotForCall(spec(kFusedTwoShot), in_place, BufferClass::kPooled), "");
  EXPECT_EQ(WhyNotForCall(spec(kFusedLL), in_place, BufferClass::kPooled), "");
}

// Aligned fake device addresses: the checks never dereference them.
const void* At(std::uintptr_t a) { return reinterpret_cast<const void*>(a); }

EpilogueArgs Good() {
  EpilogueArgs a;
  a.input = At(0x10000);
  a.residual = At(0x20000);
  a.weight = At(0x30000);
  a.out = At(0x40000);
  a.tokens = 32;
  a.hidden = 4096;
  a.eps = 1e-6;
  a.dtype = Dtype::kBf16;
  a.nccl_type = 9;
  return a;
}

std::string ErrorOf(const EpilogueArgs& a) {
  auto r = CheckEpilogueArgs(a);
  return r.ok() ? "" : r.status().message();
}

TEST(EpilogueArgs, AGoodCallGivesItsEpilogue) {
  auto e = CheckEpilogueArgs(Good());
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->kind, core::EpilogueKind::kResidualRmsNorm);
  EXPECT_EQ(e->hidden, 4096);
  EXPECT_DOUBLE_EQ(e->eps, 1e-6);
  EpilogueArgs in_place = Good();
  in_place.out = in_place.input;  // out may alias input
  EXPECT_EQ(ErrorOf(in_place), "");
  EpilogueArgs bias = Good();
  bias.kind = core::EpilogueKind::kBias;
  bias.residual = nullptr;  // unused
  EXPECT_EQ(ErrorOf(bias), "");
  EpilogueArgs none_tokens = Good();
  none_tokens.tokens = 0;  // nothing to do, but a valid call
  EXPECT_EQ(ErrorOf(none_tokens), "");
}

TEST(EpilogueArgs, EachBadArgumentIsNamed) {
  const auto with = [](auto change) {
    EpilogueArgs a = Good();
    change(a);
    return ErrorOf(a);
  };
  EXPECT_EQ(with([](EpilogueArgs& a) { a.input = nullptr; }), "input: NULL");
  EXPECT_EQ(with([](EpilogueArgs& a) { a.residual = nullptr; }), "residual: NULL");
  EXPECT_EQ(with([](EpilogueArgs& a) { a.out = nullptr; }), "out: NULL");
  EXPECT_NE(with([](EpilogueArgs& a) { a.weight = At(0x30008); }).find("weight: not 16-byte"),
            std::string::npos);
  EXPECT_NE(with([](EpilogueArgs& a) {
              a.kind = core::EpilogueKind::kBias;
              a.weight = nullptr;
            }).find("bias: NULL"),
            std::string::npos);
  EXPECT_NE(with([](EpilogueArgs& a) { a.residual = a.out; }).find("residual: must not be"),
            std::string::npos);
  EXPECT_EQ(with([](EpilogueArgs& a) {
              a.dtype = Dtype::kInt32;
              a.nccl_type = 2;
            }),
            "datatype=2: an epilogue runs on ncclFloat32, ncclFloat16 or ncclBfloat16");
  EXPECT_NE(with([](EpilogueArgs& a) { a.dtype.reset(); }).find("datatype="), std::string::npos);
  EXPECT_EQ(with([](EpilogueArgs& a) { a.hidden = 100; }),
            "hidden=100: must be a multiple of 8 in 8..16384");
  EXPECT_NE(with([](EpilogueArgs& a) { a.hidden = 16392; }).find("hidden=16392"),
            std::string::npos);
  EXPECT_NE(with([](EpilogueArgs& a) { a.hidden = 0; }).find("hidden=0"), std::string::npos);
  EXPECT_NE(with([](EpilogueArgs& a) { a.tokens = std::uint64_t{1} << 40; }).find("tokens="),
            std::string::npos);
  EXPECT_NE(with([](EpilogueArgs& a) { a.eps = std::nan(""); }).find("eps="), std::string::npos);
  EXPECT_NE(with([](EpilogueArgs& a) { a.eps = -1; }).find("eps="), std::string::npos);
}

TEST(EpilogueArgs, ShapeRulesForTheChoiceQuery) {
  EXPECT_TRUE(CheckEpilogueShape(core::EpilogueKind::kNone, 4, 100, Dtype::kFp32, 7).ok());
  EXPECT_FALSE(CheckEpilogueShape(core::EpilogueKind::kBias, 4, 100, Dtype::kFp32, 7).ok());
  EXPECT_FALSE(CheckEpilogueShape(core::EpilogueKind::kNone, 4, 0, Dtype::kFp32, 7).ok());
  EXPECT_FALSE(CheckEpilogueShape(core::EpilogueKind::kNone,
                                  std::numeric_limits<std::uint64_t>::max(), 8, Dtype::kFp32, 7)
                   .ok());
}

}  // namespace
}  // namespace ccltune::runtime

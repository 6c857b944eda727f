// The numeric pieces of the host backend: 16-bit float rounding, reduction kernels (wrap,
// per-step rounding), deterministic inputs, block layout, and the reference check's verdicts.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "worker/host/data_gen.h"
#include "worker/host/half.h"
#include "worker/host/host_comm.h"
#include "worker/host/reduce_kernels.h"
#include "worker/host/reference_check.h"

namespace ccltune::worker::host {
namespace {

TEST(HalfTest, Fp16RoundsToNearestEven) {
  EXPECT_EQ(FloatToFp16(1.0f).bits, 0x3c00);
  EXPECT_EQ(FloatToFp16(65504.0f).bits, 0x7bff);
  EXPECT_EQ(FloatToFp16(65520.0f).bits, 0x7c00);               // rounds up to +inf
  EXPECT_EQ(FloatToFp16(0x1.0p-24f).bits, 0x0001);             // smallest subnormal
  EXPECT_EQ(FloatToFp16(1.0f + 0x1.0p-11f).bits, 0x3c00);      // tie -> even (down)
  EXPECT_EQ(FloatToFp16(1.0f + 3 * 0x1.0p-11f).bits, 0x3c02);  // tie -> even (up)
  EXPECT_EQ(FloatToFp16(-2.0f).bits, 0xc000);
  for (std::uint32_t b = 0; b < 0x7c00; b += 7) {  // every finite value round-trips
    EXPECT_EQ(FloatToFp16(Fp16ToFloat(Fp16{static_cast<std::uint16_t>(b)})).bits, b);
  }
}

TEST(HalfTest, Bf16RoundsToNearestEven) {
  EXPECT_EQ(FloatToBf16(1.0f).bits, 0x3f80);
  EXPECT_EQ(FloatToBf16(1.0f + 0x1.0p-8f).bits, 0x3f80);      // tie -> even (down)
  EXPECT_EQ(FloatToBf16(1.0f + 3 * 0x1.0p-8f).bits, 0x3f82);  // tie -> even (up)
  EXPECT_EQ(FloatToBf16(1.0f + 0x1.8p-8f).bits, 0x3f81);      // above the tie -> up
  EXPECT_EQ(Bf16ToFloat(Bf16{0x4040}), 3.0f);
}

TEST(ReduceKernelTest, IntegersWrapLikeTwosComplement) {
  std::int8_t a[2] = {120, -128}, b[2] = {10, -1}, out[2];
  GetReduceFn(core::Dtype::kInt8, core::RedOp::kSum).value()(out, a, b, 2);
  EXPECT_EQ(out[0], static_cast<std::int8_t>(-126));
  EXPECT_EQ(out[1], static_cast<std::int8_t>(127));
  std::int32_t x = 1 << 30, y = 4, p;
  GetReduceFn(core::Dtype::kInt32, core::RedOp::kProd).value()(&p, &x, &y, 1);
  EXPECT_EQ(p, 0);
  std::int32_t lo = -3, hi = 2, m;
  GetReduceFn(core::Dtype::kInt32, core::RedOp::kMin).value()(&m, &hi, &lo, 1);
  EXPECT_EQ(m, -3);
}

TEST(ReduceKernelTest, AvgSumsThenDividesTruncatingIntegersTowardZero) {
  EXPECT_EQ(GetReduceFn(core::Dtype::kInt8, core::RedOp::kAvg).value(),
            GetReduceFn(core::Dtype::kInt8, core::RedOp::kSum).value());
  std::int8_t i8[4] = {-7, 7, 127, -128};
  DivideInPlace(core::Dtype::kInt8, i8, 4, 2);
  EXPECT_EQ(i8[0], -3);
  EXPECT_EQ(i8[1], 3);
  EXPECT_EQ(i8[2], 63);
  EXPECT_EQ(i8[3], -64);
  std::int32_t i32[2] = {-10, 11};
  DivideInPlace(core::Dtype::kInt32, i32, 2, 3);
  EXPECT_EQ(i32[0], -3);
  EXPECT_EQ(i32[1], 3);
  float f[2] = {3.0f, -1.0f};
  DivideInPlace(core::Dtype::kFp32, f, 2, 4);
  EXPECT_EQ(f[0], 0.75f);
  EXPECT_EQ(f[1], -0.25f);
  Bf16 b = FloatToBf16(3.0f);
  DivideInPlace(core::Dtype::kBf16, &b, 1, 3);
  EXPECT_EQ(b.bits, FloatToBf16(1.0f).bits);
}

TEST(ReduceKernelTest, Bf16SumRoundsAfterEveryStep) {
  // 256 + 1 is not a bf16 value (8 mantissa bits): rounds back to 256 each step.
  Bf16 acc = FloatToBf16(256.0f);
  const Bf16 one = FloatToBf16(1.0f);
  const ReduceFn sum = GetReduceFn(core::Dtype::kBf16, core::RedOp::kSum).value();
  for (int i = 0; i < 3; ++i) sum(&acc, &acc, &one, 1);
  EXPECT_EQ(Bf16ToFloat(acc), 256.0f);
  EXPECT_FALSE(GetReduceFn(core::Dtype::kFp32, core::RedOp::kNone).ok());
}

TEST(DataGenTest, DeterministicNonZeroAndDifferentPerRank) {
  const std::uint64_t s0 =
      MakeSeed({core::Op::kAllReduce, core::Dtype::kInt8, core::RedOp::kSum, 4096, 0, 0});
  const std::uint64_t s1 =
      MakeSeed({core::Op::kAllReduce, core::Dtype::kInt8, core::RedOp::kSum, 4096, 1, 0});
  int same = 0;
  for (std::size_t i = 0; i < 1000; ++i) {
    const double v = InputValue(core::Dtype::kInt8, s0, i);
    EXPECT_NE(v, 0);
    EXPECT_LE(std::abs(v), 5);
    EXPECT_EQ(v, InputValue(core::Dtype::kInt8, s0, i));
    same += v == InputValue(core::Dtype::kInt8, s1, i);
  }
  EXPECT_LT(same, 300);
  std::vector<std::uint16_t> buf(100);
  FillInput(buf.data(), core::Dtype::kBf16, s0, buf.size());
  for (std::size_t i = 0; i < buf.size(); ++i) {
    const double v = LoadElement(core::Dtype::kBf16, buf.data(), i);
    EXPECT_EQ(v, InputValue(core::Dtype::kBf16, s0, i));
    EXPECT_GE(v, 0.5);
    EXPECT_LT(v, 1.5);
  }
}

TEST(BlocksTest, BalancedCoversOddCounts) {
  const Blocks b = Blocks::Balanced(7, 3);
  EXPECT_EQ(b.size(0) + b.size(1) + b.size(2), 7u);
  EXPECT_EQ(b.off(0), 0u);
  EXPECT_EQ(b.start.back(), 7u);
  EXPECT_EQ(b.max_size(), 3u);
  const Blocks one = Blocks::Balanced(1, 4);  // empty blocks are allowed
  EXPECT_EQ(one.size(0) + one.size(1) + one.size(2) + one.size(3), 1u);
}

CheckSpec TwoRankSum(core::Dtype dtype, std::size_t count) {
  CheckSpec spec{core::Op::kAllReduce, dtype, core::RedOp::kSum, count, 0, 0, {}};
  for (int r = 0; r < 2; ++r) {
    spec.seeds.push_back(MakeSeed({core::Op::kAllReduce, dtype, core::RedOp::kSum, 64, r, 9}));
  }
  return spec;
}

TEST(ReferenceCheckTest, AcceptsTheTrueSumAndNamesTheWrongElement) {
  const CheckSpec spec = TwoRankSum(core::Dtype::kFp32, 16);
  std::vector<float> out(16);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<float>(InputValue(core::Dtype::kFp32, spec.seeds[0], i) +
                                InputValue(core::Dtype::kFp32, spec.seeds[1], i));
  }
  EXPECT_TRUE(CheckOutput(spec, out.data()).ok());
  out[5] *= 1.001f;  // 1e-3 relative: beyond fp32's 1e-5
  const core::Status st = CheckOutput(spec, out.data());
  EXPECT_EQ(st.code(), core::StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("wrong: element 5 of 16"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("> 1e-05"), std::string::npos) << st.message();
}

TEST(ReferenceCheckTest, Bf16ToleranceIsTwoPercentAndIntsAreExact) {
  const CheckSpec bf = TwoRankSum(core::Dtype::kBf16, 8);
  std::vector<Bf16> out(8);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = FloatToBf16(static_cast<float>(ExpectedElement(bf, i) * 1.01));
  }
  EXPECT_TRUE(CheckOutput(bf, out.data()).ok());
  out[3] = FloatToBf16(static_cast<float>(ExpectedElement(bf, 3) * 1.05));
  EXPECT_FALSE(CheckOutput(bf, out.data()).ok());

  const CheckSpec ints = TwoRankSum(core::Dtype::kInt32, 8);
  std::vector<std::int32_t> iv(8);
  for (std::size_t i = 0; i < iv.size(); ++i) iv[i] = static_cast<int>(ExpectedElement(ints, i));
  EXPECT_TRUE(CheckOutput(ints, iv.data()).ok());
  iv[7] += 1;
  const core::Status st = CheckOutput(ints, iv.data());
  EXPECT_NE(st.message().find("wrong: element 7 of 8"), std::string::npos) << st.message();
}

TEST(ReferenceCheckTest, AvgIsTheSumOverTheRanksIntegersTruncated) {
  for (core::Dtype d : {core::Dtype::kInt32, core::Dtype::kFp32}) {
    CheckSpec avg{core::Op::kAllReduce, d, core::RedOp::kAvg, 64, 0, 0, {}};
    for (int r = 0; r < 3; ++r) avg.seeds.push_back(2000 + r);
    CheckSpec sum = avg;
    sum.redop = core::RedOp::kSum;
    for (std::size_t e = 0; e < 64; ++e) {
      const double mean = ExpectedElement(sum, e) / 3;
      EXPECT_EQ(ExpectedElement(avg, e), core::IsFloat(d) ? mean : std::trunc(mean))
          << core::DtypeName(d) << " " << e;
    }
  }
}

TEST(ReferenceCheckTest, Int8ProductWraps) {
  CheckSpec spec{core::Op::kAllReduce, core::Dtype::kInt8, core::RedOp::kProd, 64, 0, 0, {}};
  for (int r = 0; r < 5; ++r) spec.seeds.push_back(1000 + r);
  for (std::size_t e = 0; e < 64; ++e) {
    std::int64_t p = 1;
    for (std::uint64_t s : spec.seeds) p *= static_cast<std::int64_t>(InputValue(spec.dtype, s, e));
    EXPECT_EQ(ExpectedElement(spec, e), static_cast<std::int8_t>(p)) << e;
  }
}

}  // namespace
}  // namespace ccltune::worker::host

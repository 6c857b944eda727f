// What the adaptive search carries from one size to the next (core/search/search_memory.h).
#include "core/search/search_memory.h"

#include <gtest/gtest.h>

namespace ccltune::core {
namespace {

Problem AllReduce(std::uint64_t bytes, Dtype dtype = Dtype::kFp32) {
  Problem p;
  p.op = Op::kAllReduce;
  p.dtype = dtype;
  p.redop = RedOp::kSum;
  p.bytes = bytes;
  return p;
}

ResultRecord Measured(const Problem& p, std::vector<std::pair<std::string, double>> times) {
  ResultRecord r;
  r.op = p.op;
  r.dtype = p.dtype;
  r.redop = p.redop;
  r.bytes = p.bytes;
  for (auto& [name, us] : times) {
    ChoiceResult c;
    c.name = name;
    c.time_us = us;
    if (us < 0) c.status = ChoiceStatus::kPruned;  // no time
    r.choices.push_back(c);
  }
  return r;
}

const std::vector<std::string> kNames{"ring", "recursive-doubling", "direct", "rs+ag"};

std::vector<std::string> Named(const std::vector<std::size_t>& order) {
  std::vector<std::string> out;
  for (std::size_t i : order) out.push_back(kNames[i]);
  return out;
}

TEST(SearchMemory, WithoutHistoryTheDefaultComesFirstThenCatalogOrder) {
  SearchMemory m;
  EXPECT_EQ(Named(m.Order(AllReduce(1024), kNames, "ring")), kNames);
  EXPECT_EQ(Named(m.Order(AllReduce(1024), kNames, "direct")),
            (std::vector<std::string>{"direct", "ring", "recursive-doubling", "rs+ag"}));
}

TEST(SearchMemory, TheNeighboursRankingSetsTheOrderAfterTheDefault) {
  SearchMemory m;
  m.Learn(Measured(AllReduce(1024),
                   {{"ring", 400}, {"recursive-doubling", 130}, {"direct", 200}, {"rs+ag", -1}}));
  EXPECT_EQ(Named(m.Order(AllReduce(2048), kNames, "ring")),
            (std::vector<std::string>{"ring", "recursive-doubling", "direct", "rs+ag"}));
  m.Learn(
      Measured(AllReduce(1 << 20),
               {{"ring", 900}, {"recursive-doubling", 1500}, {"direct", 2000}, {"rs+ag", 800}}));
  // 512 KiB is nearer (log2) to 1 MiB than to 1 KiB.
  EXPECT_EQ(Named(m.Order(AllReduce(512 << 10), kNames, "ring")),
            (std::vector<std::string>{"ring", "rs+ag", "recursive-doubling", "direct"}));
  EXPECT_EQ(Named(m.Order(AllReduce(4096), kNames, "ring")),
            (std::vector<std::string>{"ring", "recursive-doubling", "direct", "rs+ag"}));
}

TEST(SearchMemory, GroupsDoNotTeachEachOther) {
  SearchMemory m;
  m.Learn(Measured(AllReduce(1024), {{"ring", 400}, {"rs+ag", 100}}));
  EXPECT_EQ(Named(m.Order(AllReduce(1024, Dtype::kBf16), kNames, "ring")), kNames);
  m.RememberSkip(AllReduce(1024), "rs+ag", "no symmetric window");
  EXPECT_EQ(m.KnownSkip(AllReduce(1024, Dtype::kBf16), "rs+ag"), nullptr);
}

TEST(SearchMemory, AStructuralSkipIsKnownAtEveryLaterSizeOfTheGroup) {
  SearchMemory m;
  EXPECT_EQ(m.KnownSkip(AllReduce(4096), "nccl-symm"), nullptr);
  m.RememberSkip(AllReduce(4096), "nccl-symm", "skip: NCCL created no symmetric window");
  const std::string* why = m.KnownSkip(AllReduce(1 << 24), "nccl-symm");
  ASSERT_NE(why, nullptr);
  EXPECT_EQ(*why, "skip: NCCL created no symmetric window (learned at 4096 bytes; not retried)");
  EXPECT_EQ(m.KnownSkip(AllReduce(1 << 24), "nccl"), nullptr);
}

// The screening rounds' length comes from the default's time at the nearest size below
// (never above: a larger size's longer ops would make rounds short too early), per group.
TEST(SearchMemory, DefaultTimeOfTheNearestSizeBelow) {
  SearchMemory m;
  EXPECT_EQ(m.DefaultOpUs(AllReduce(4096)), 0);
  ResultRecord small = Measured(AllReduce(1024), {{"ring", 40}});
  small.default_time_us = 40;
  ResultRecord big = Measured(AllReduce(1 << 20), {{"ring", 900}});
  big.default_time_us = 900;
  m.Learn(small);
  m.Learn(big);
  EXPECT_EQ(m.DefaultOpUs(AllReduce(1024)), 40);
  EXPECT_EQ(m.DefaultOpUs(AllReduce(512 << 10)), 40);
  EXPECT_EQ(m.DefaultOpUs(AllReduce(4 << 20)), 900);
  EXPECT_EQ(m.DefaultOpUs(AllReduce(512)), 0);
  EXPECT_EQ(m.DefaultOpUs(AllReduce(4 << 20, Dtype::kBf16)), 0);            // another group
  ResultRecord no_default = Measured(AllReduce(8 << 20), {{"direct", 5}});  // default not valid
  m.Learn(no_default);
  EXPECT_EQ(m.DefaultOpUs(AllReduce(8 << 20)), 900);
}

}  // namespace
}  // namespace ccltune::core

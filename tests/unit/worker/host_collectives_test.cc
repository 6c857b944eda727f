// Every host algorithm × dtype × reduce-op × odd count, on 2..5 ranks over real TCP,
// checked element by element against the host reference; allReduce results must also be
// bit-identical on every rank.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/unit/worker/host_test_util.h"
#include "worker/host/algorithms.h"
#include "worker/host/data_gen.h"
#include "worker/host/reference_check.h"

namespace ccltune::worker::host {
namespace {

using testing::HostRanks;
using testing::RunOnRanks;

struct Case {
  const Algorithm* algo;
  core::Dtype dtype;
  core::RedOp redop;
  std::size_t count;
  std::string Name() const {
    return std::string(core::OpName(algo->op)) + "/" + algo->name + "/" + core::DtypeName(dtype) +
           "/" + core::RedOpName(redop) + "/" + std::to_string(count);
  }
};

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  const std::vector<core::RedOp>& redops = core::AllRedOps();
  for (const Algorithm& a : Algorithms()) {
    if (a.test_only) continue;
    for (core::Dtype d : core::AllDtypes()) {
      for (std::size_t count : {1, 7, 1000, 65537}) {
        if (!core::IsReducing(a.op)) {
          cases.push_back({&a, d, core::RedOp::kNone, count});
          continue;
        }
        for (core::RedOp r : redops) cases.push_back({&a, d, r, count});
      }
    }
  }
  return cases;
}

std::size_t SendCount(core::Op op, std::size_t count, int world) {
  const bool split = op == core::Op::kReduceScatter || op == core::Op::kAllToAll;
  return split ? count * world : count;
}

// Runs one case on every rank; returns each rank's output bytes (empty on failure).
std::vector<std::vector<std::byte>> RunCase(HostRanks& ranks, const Case& c, int gen,
                                            std::vector<std::string>& errors) {
  const int n = ranks.world;
  const std::size_t elem = core::DtypeSize(c.dtype);
  std::vector<std::vector<std::byte>> outs(n);
  RunOnRanks(n, [&](int r) {
    CheckSpec spec{c.algo->op, c.dtype, c.redop, c.count, r, n % 2 /*root*/, {}};
    for (int j = 0; j < n; ++j) {
      spec.seeds.push_back(
          MakeSeed({c.algo->op, c.dtype, c.redop, c.count, j, static_cast<std::uint64_t>(gen)}));
    }
    std::vector<std::byte> in(SendCount(c.algo->op, c.count, n) * elem);
    std::vector<std::byte> out(OutputCount(c.algo->op, c.count, n) * elem, std::byte{0xA5});
    FillInput(in.data(), c.dtype, spec.seeds[r], in.size() / elem);
    CollArgs args{c.algo->op, c.dtype, c.redop, in.data(), out.data(), c.count, elem};
    args.root = spec.root;
    if (core::IsReducing(c.algo->op)) args.reduce = GetReduceFn(c.dtype, c.redop).value();
    core::Status st = ranks.backends[r]->comm().Run(core::OpName(c.algo->op), c.algo->name,
                                                    c.algo->run, args, DeadlineIn(20));
    if (st.ok()) st = CheckOutput(spec, out.data());
    if (!st.ok()) errors[r] = st.ToString();
    outs[r] = std::move(out);
  });
  return outs;
}

class HostCollectivesTest : public ::testing::TestWithParam<int> {};

TEST_P(HostCollectivesTest, EveryChoiceMatchesReferenceAndAllReduceIsBitIdentical) {
  const int n = GetParam();
  HostRanks ranks(n);
  NeverCancel never;
  for (const core::Status& st : ranks.Create(never)) ASSERT_TRUE(st.ok()) << st.ToString();
  int gen = 0;
  for (const Case& c : AllCases()) {
    std::vector<std::string> errors(n);
    const auto outs = RunCase(ranks, c, ++gen, errors);
    for (int r = 0; r < n; ++r) {
      ASSERT_TRUE(errors[r].empty())
          << c.Name() << " world " << n << " rank " << r << ": " << errors[r];
    }
    if (c.algo->op != core::Op::kAllReduce) continue;
    for (int r = 1; r < n; ++r) {
      ASSERT_EQ(outs[r], outs[0]) << c.Name() << ": rank " << r << " differs from rank 0";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(WorldSizes, HostCollectivesTest, ::testing::Values(2, 3, 4, 5),
                         [](const auto& info) { return "world" + std::to_string(info.param); });

}  // namespace
}  // namespace ccltune::worker::host

// host_backend_bench: µs per op for every host choice at a few sizes, ranks as threads of
// this process over real TCP on 127.0.0.1 (the same loop as the bench runner: barrier,
// timed round, max across ranks, median of rounds). Not a test: numbers for docs/results/.
// Usage: host_backend_bench [ranks=4]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/unit/worker/host_test_util.h"

namespace ccltune::worker::host {
namespace {

constexpr int kRounds = 5;

// Median over rounds of the max-over-ranks time, in µs; negative on error (printed).
double MeasureChoice(HostBackend& b, const core::Problem& p, const core::ChoiceName& choice) {
  auto prepared = b.Prepare(p, choice, {});
  core::Status st = prepared.status();
  const int iters = p.bytes >= (1u << 20) ? 5 : 20;
  if (st.ok()) st = (*prepared)->Warmup(3, DeadlineIn(60));
  std::vector<double> rounds;
  for (int i = 0; st.ok() && i < kRounds; ++i) {
    st = b.Barrier(DeadlineIn(60));
    auto t = st.ok() ? (*prepared)->TimedRound(iters, DeadlineIn(60)) : core::Result<double>(st);
    auto m = t.ok() ? b.AllReduceMax({*t}, DeadlineIn(60))
                    : core::Result<std::vector<double>>(t.status());
    st = m.status();
    if (st.ok()) rounds.push_back(m->front());
  }
  if (st.ok()) st = (*prepared)->Verify(DeadlineIn(60));
  if (!st.ok()) {
    if (b.rank() == 0) std::fprintf(stderr, "%s: %s\n", choice.base.c_str(), st.ToString().c_str());
    return -1;
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2] * 1e6;
}

void RankMain(HostBackend& b) {
  const std::vector<std::uint64_t> sizes{1u << 10, 64u << 10, 1u << 20, 4u << 20};
  if (b.rank() == 0) {
    std::printf("%-14s %10s  %-20s %12s\n", "op", "bytes", "choice", "time_us");
  }
  for (core::Op op : core::AllOps()) {
    for (std::uint64_t bytes : sizes) {
      core::Problem p;
      p.op = op;
      p.dtype = core::Dtype::kFp32;
      p.redop = core::IsReducing(op) ? core::RedOp::kSum : core::RedOp::kNone;
      p.bytes = bytes;
      for (const ChoiceCandidate& c : b.Candidates(p)) {
        if (!c.applicable()) continue;
        const double us = MeasureChoice(b, p, c.name);
        if (b.rank() == 0) {
          std::printf("%-14s %10llu  %-20s %12.1f\n", core::OpName(op),
                      static_cast<unsigned long long>(bytes), c.name.base.c_str(), us);
          std::fflush(stdout);
        }
      }
    }
  }
}

}  // namespace
}  // namespace ccltune::worker::host

int main(int argc, char** argv) {
  using namespace ccltune::worker;
  const int n = argc > 1 ? std::atoi(argv[1]) : 4;
  if (n < 1 || n > 64) {
    std::fprintf(stderr, "usage: host_backend_bench [ranks 1..64]\n");
    return 2;
  }
  testing::HostRanks ranks(n);
  NeverCancel never;
  for (const auto& st : ranks.Create(never)) {
    if (!st.ok()) {
      std::fprintf(stderr, "host_backend_bench: %s\n", st.ToString().c_str());
      return 1;
    }
  }
  std::printf("host backend, %d ranks as threads, fp32, median of %d rounds (max over ranks)\n", n,
              ccltune::worker::host::kRounds);
  testing::RunOnRanks(n, [&](int r) { host::RankMain(*ranks.backends[r]); });
  return 0;
}

// The example-tuner CSV: byte ranges agree with the cache's nearest-log2 rule for every
// size, rows follow the plugin's applied-choice rule for the channel ceiling (--min-ctas),
// and NCCL's example plugin's matching of our rows selects what ccltune's plugin table
// selects.
#include "worker/export/nccl_tuner_csv.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <sstream>

#include "core/apply/record_parser.h"
#include "core/apply/winner_table.h"
#include "core/results/result_store.h"
#include "tests/unit/export/records_fixture.h"

namespace ccltune::worker::exporting {
namespace {

std::size_t RangeOf(const std::vector<ByteRange>& r, std::uint64_t n) {
  for (std::size_t i = 0; i < r.size(); ++i)
    if (n >= r[i].min_bytes && n <= r[i].max_bytes) return i;
  return r.size();
}

TEST(NearestBucketRanges, AgreeWithNearestLog2BucketEverywhere) {
  const std::vector<std::uint64_t> sizes{1024, 3000, 65536, 1 << 20, 1 << 26, 1ull << 34};
  const auto ranges = NearestBucketRanges(sizes);
  ASSERT_EQ(ranges.size(), sizes.size());
  EXPECT_EQ(ranges.front().min_bytes, 0u);
  EXPECT_EQ(ranges.back().max_bytes, UINT64_MAX);
  std::vector<std::uint64_t> probes{0, 1, UINT64_MAX};
  for (const auto& r : ranges)
    for (std::uint64_t d : {0ull, 1ull, 2ull}) {
      probes.push_back(r.min_bytes + d);
      probes.push_back(r.max_bytes - d);
    }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) probes.push_back(rng() >> (rng() % 60));
  for (std::uint64_t n : probes) {
    const std::size_t i = RangeOf(ranges, n);
    ASSERT_LT(i, sizes.size()) << n;
    EXPECT_EQ(sizes[i], core::NearestLog2Bucket(sizes, n)) << "n=" << n;
  }
  for (std::size_t i = 1; i < ranges.size(); ++i)
    EXPECT_EQ(ranges[i].min_bytes, ranges[i - 1].max_bytes + 1);
}

TEST(NcclTunerRows, OnlyAlgoProtoWinnersWithSplitRanges) {
  // Ceiling 8: the 64 KiB ring/ll128 ctas=8 winner is reproducible and applied as it is.
  const auto rows = NcclTunerRows(testing::FixtureSet("fp"), 1, std::nullopt, 8);
  ASSERT_EQ(rows.size(), 4u);
  // allReduce bf16 (preferred over fp32): 1 KiB tree/ll and 64 KiB ring/ll128 with 8 ch.
  EXPECT_EQ(rows[0].collective, "allreduce");
  EXPECT_EQ(rows[0].range.min_bytes, 0u);
  EXPECT_EQ(rows[0].range.max_bytes, 8191u);  // sqrt(1Ki*64Ki) = 8Ki belongs to 64 KiB
  EXPECT_EQ(rows[0].algorithm, "tree");
  EXPECT_EQ(rows[0].protocol, "ll");
  EXPECT_EQ(rows[0].channels, -1);
  EXPECT_EQ(rows[1].range.min_bytes, 8192u);
  EXPECT_EQ(rows[1].range.max_bytes, 262143u);
  EXPECT_EQ(rows[1].protocol, "ll128");
  EXPECT_EQ(rows[1].channels, 8);
  EXPECT_EQ(rows[1].ranks, 4);
  EXPECT_EQ(rows[1].nodes, 1);
  EXPECT_EQ(rows[2].collective, "allgather");
  EXPECT_EQ(rows[2].range.max_bytes, 32767u);
  EXPECT_EQ(rows[3].range.min_bytes, 1048576u);  // sqrt(256Ki*4Mi) = 1 MiB
  EXPECT_EQ(rows[3].range.max_bytes, UINT64_MAX);
}

TEST(NcclTunerRows, CtasWinnerAboveCeilingGetsThePluginsSubstitute) {
  // Without --min-ctas the 64 KiB winner (ctas=8) cannot be reproduced; the fixture's other
  // reproducible choices are slower than nccl, so NCCL decides: no row, ranges unchanged.
  auto rows = NcclTunerRows(testing::FixtureSet("fp"), 1, std::nullopt, 0);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].range.max_bytes, 8191u);
  EXPECT_EQ(rows[1].collective, "allgather");
  // A ctas=32 winner whose ring/ll128 beats nccl by > 3 %: that row, without channels.
  auto records = testing::FixtureSet("fp");
  auto& r = records[1];  // allReduce bf16 64 KiB
  r.winner = "nccl:ctas=32";
  r.choices[1].name = "nccl:algo=ring,proto=ll128";
  r.choices[1].time_us = r.choices[0].time_us * 0.9;
  r.choices[3].name = "nccl:ctas=32";
  rows = NcclTunerRows(records, 1, std::nullopt, 0);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[1].range.min_bytes, 8192u);
  EXPECT_EQ(rows[1].algorithm, "ring");
  EXPECT_EQ(rows[1].protocol, "ll128");
  EXPECT_EQ(rows[1].channels, -1);
  EXPECT_EQ(rows[1].winner, "nccl:ctas=32");
  EXPECT_EQ(rows[1].applied, "nccl:algo=ring,proto=ll128");
  const std::string csv = NcclTunerCsv(records, "fp", 1, std::nullopt, 0);
  EXPECT_NE(csv.find("# tuned 65536 B: winner nccl:ctas=32 needs >= 32 channels (set "
                     "NCCL_MIN_CTAS=32); applying nccl:algo=ring,proto=ll128"),
            std::string::npos)
      << csv;
  // With the channels it needs, the winner itself: ctas-only, so NCCL picks the algorithm.
  EXPECT_EQ(NcclTunerRows(records, 1, std::nullopt, 32).size(), 3u);
}

// NCCL's example plugin (plugins/tuner/example/plugin.c) restated: first row whose
// collective and [min, max] match wins; lines starting with '#' are comments.
struct ExampleRow {
  std::string coll, algo, proto;
  std::uint64_t lo, hi;
  int channels;
};
std::vector<ExampleRow> ParseLikeExamplePlugin(const std::string& csv) {
  std::vector<ExampleRow> rows;
  std::istringstream in(csv);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string t; std::getline(ss, t, ',');) f.push_back(t);
    EXPECT_EQ(f.size(), 10u) << line;
    rows.push_back({f[0], f[3], f[4], std::strtoull(f[1].c_str(), nullptr, 10),
                    std::strtoull(f[2].c_str(), nullptr, 10), std::atoi(f[5].c_str())});
  }
  return rows;
}

// For each ceiling, the example plugin's reading of our CSV and our plugin's table agree.
void ExpectExamplePluginAgrees(const std::vector<core::ResultRecord>& records, int ceiling) {
  const auto rows = ParseLikeExamplePlugin(NcclTunerCsv(records, "fp", 1, std::nullopt, ceiling));
  std::vector<apply::WinnerRecord> parsed;
  for (const auto& r : records) {
    auto w = apply::ParseWinnerRecord(core::ToJson(r).dump());
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    parsed.push_back(*w);
  }
  const auto table = apply::WinnerTable::Build(parsed, std::nullopt, ceiling);
  const std::pair<int, const char*> colls[] = {{4, "allreduce"}, {2, "allgather"}};
  for (const auto& [func, name] : colls) {
    for (std::uint64_t n = 1; n < (1ull << 32); n = n * 5 / 4 + 1) {
      const auto* ours = table.Lookup(func, n);
      const bool ours_forces = ours && ours->applied.forced.algo >= 0;
      const ExampleRow* theirs = nullptr;
      for (const auto& row : rows)
        if (row.coll == name && n >= row.lo && n <= row.hi) {
          theirs = &row;
          break;
        }
      ASSERT_EQ(ours_forces, theirs != nullptr) << name << " " << n << " ceiling " << ceiling;
      if (!theirs) continue;
      const apply::ForcedChoice& f = ours->applied.forced;
      EXPECT_EQ(theirs->algo, apply::AlgoName(f.algo)) << n;
      EXPECT_EQ(theirs->proto, apply::ProtoName(f.proto)) << n;
      EXPECT_EQ(theirs->channels, f.channels > 0 ? f.channels : -1);
    }
  }
}

TEST(NcclTunerCsv, ExamplePluginSelectsWhatOurPluginSelects) {
  for (int ceiling : {0, 8, 64}) ExpectExamplePluginAgrees(testing::FixtureSet("fp"), ceiling);
}

}  // namespace
}  // namespace ccltune::worker::exporting

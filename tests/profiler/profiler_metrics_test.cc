// End to end with the real libccltune-telemetry.so.1: the plugin, driven by the fake NCCL
// in a child process (profiler_metrics_driver.cc), is scraped on its /metrics endpoint and
// the series are compared exactly under the duty cycle (profiler_metrics_driver.cc says what
// it runs): every call counted, the sampled ones in the histograms, the dropped counter.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <thread>

#include "tests/metrics/child_process.h"
#include "tests/support/free_port.h"

namespace ccltune::testing {
namespace {

using std::chrono::milliseconds;

// The value of the sample of `family` whose labels include every one of `labels`
// (`name="value"` pairs, in any order), or nullopt.
std::optional<double> Sample(const std::string& text, const std::string& family,
                             const std::vector<std::string>& labels) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(family + "{", 0) != 0) continue;
    const auto close = line.rfind('}');
    if (close == std::string::npos) continue;
    const std::string set = line.substr(family.size(), close - family.size() + 1);
    bool all = true;
    for (const auto& l : labels) all = all && set.find(l) != std::string::npos;
    if (all) return std::stod(line.substr(close + 1));
  }
  return std::nullopt;
}

const std::vector<std::string> kAllGather = {"comm=\"0123456789abcdef\"", "op=\"allGather\"",
                                             "choice=\"nccl:algo=nvlstree,proto=simple\"",
                                             "source=\"nccl\""};
// The first call of a size is counted before NCCL said what runs for it: under "nccl".
const std::vector<std::string> kFirstOfASize = {"comm=\"0123456789abcdef\"", "choice=\"nccl\"",
                                                "source=\"nccl\""};
std::vector<std::string> With(std::vector<std::string> labels, const std::string& more) {
  labels.push_back(more);
  return labels;
}
const std::vector<std::string> kPoolFull = {"what=\"profiler-events-full\""};

TEST(ProfilerMetrics, NcclCallsReachTheEndpointExactly) {
  const char* so = std::getenv("CCLTUNE_PROFILER_SO");
  const char* driver = std::getenv("CCLTUNE_PROFILER_DRIVER");
  ASSERT_TRUE(so && driver);
  const int port = FreePort();
  ASSERT_NE(port, 0);
  // Read by the child's telemetry library, as by an application's.
  setenv("CCLTUNE_TELEMETRY", "on", 1);
  setenv("CCLTUNE_METRICS_PORT", std::to_string(port).c_str(), 1);
  setenv("LOCAL_RANK", "0", 1);
  setenv("CCLTUNE_PROFILER_EVENTS", "16", 1);
  unsetenv("CCLTUNE_PUSHGATEWAY");
  auto child = ChildProcess::Spawn({driver, so}, ::testing::TempDir() + "/profiler_driver.log");
  ASSERT_TRUE(child.ok()) << child.status().ToString();

  const std::vector<std::string> ar = {"comm=\"0123456789abcdef\"", "rank=\"2\"",
                                       "op=\"allReduce\"", "choice=\"nccl:algo=ring,proto=ll128\"",
                                       "source=\"nccl\""};
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    auto got = HttpGet(port, "/metrics", milliseconds(1000));
    if (got.ok() && got->code == 200) {
      text = got->body;
      // Every call is in: the driver's calls reach the library's queue in order, but its
      // thread may expose them across two scrapes.
      if (Sample(text, "ccltune_program_calls_total", ar) == 1099.0 &&
          Sample(text, "ccltune_program_calls_total", kAllGather) == 1.0 &&
          Sample(text, "ccltune_program_telemetry_dropped_total", kPoolFull) == 1.0)
        break;
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_EQ(Sample(text, "ccltune_program_calls_total", ar), 1099.0) << text << "\n"
                                                                     << child.value()->LogTail();
  for (const char* op : {"op=\"allReduce\"", "op=\"allGather\""})
    EXPECT_EQ(Sample(text, "ccltune_program_calls_total", With(kFirstOfASize, op)), 1.0) << op;
  // reduceScatter: its first (untimed) and second (timed, counted before its Coll) under "nccl".
  EXPECT_EQ(
      Sample(text, "ccltune_program_calls_total", With(kFirstOfASize, "op=\"reduceScatter\"")),
      2.0);
  EXPECT_EQ(Sample(text, "ccltune_program_calls_total",
                   {"op=\"reduceScatter\"", "choice=\"nccl:algo=ring,proto=ll128\""}),
            16.0);
  auto ar_hist = ar;
  ar_hist.insert(ar_hist.end(), {"dtype=\"bf16\"", "size=\"512KiB\""});
  EXPECT_EQ(Sample(text, "ccltune_program_collective_seconds_count", ar_hist), 128.0);
  const auto sum = Sample(text, "ccltune_program_collective_seconds_sum", ar_hist);
  ASSERT_TRUE(sum.has_value()) << text;
  EXPECT_NEAR(*sum, 128 * 4100e-9, 1e-12);
  // No reduceScatter finished: no histogram series for it at all.
  EXPECT_FALSE(Sample(text, "ccltune_program_collective_seconds_count", {"op=\"reduceScatter\""})
                   .has_value());
  // fp32 as the application's call said, though NCCL's Coll says ncclInt8 for allGather.
  const std::vector<std::string> ag = {"comm=\"0123456789abcdef\"",
                                       "op=\"allGather\"",
                                       "dtype=\"fp32\"",
                                       "size=\"16KiB\"",
                                       "choice=\"nccl:algo=nvlstree,proto=simple\"",
                                       "source=\"nccl\""};
  EXPECT_EQ(Sample(text, "ccltune_program_collective_seconds_count", ag), 2.0) << text;
  const auto ag_sum = Sample(text, "ccltune_program_collective_seconds_sum", ag);
  ASSERT_TRUE(ag_sum.has_value()) << text;
  EXPECT_NEAR(*ag_sum, 2 * 800e-9, 1e-12);
  EXPECT_EQ(
      Sample(text, "ccltune_program_telemetry_dropped_total", {"what=\"profiler-events-full\""}),
      1.0)
      << text;
}

}  // namespace
}  // namespace ccltune::testing
